"""`fleet features` as a library: every usable node of a partition asked
for its /proc/cpuinfo through srun, and a Features= line per node for
slurm.conf with its CPU model (core/uarch.py's slug) as a feature."""

from vdsobench_cli.core import hostlist, uarch
from vdsobench_cli.fleet import fleet_slurm


FEATURE_PROBE = ('echo "@node $SLURMD_NODENAME"; echo "@kernel $(uname -r)"; '
                 "awk 'NF == 0 { exit } { print }' /proc/cpuinfo")


def parse_srun_labels(text):
    """{node: {"kernel", "cpuinfo"}} from `srun -l` output of FEATURE_PROBE
    (each line prefixed with its task number)."""
    tasks = {}
    for line in text.splitlines():
        label, sep, rest = line.partition(": ")
        if sep and label.strip().isdigit():
            tasks.setdefault(label.strip(), []).append(rest)
    out = {}
    for lines in tasks.values():
        node = next((x[6:].strip() for x in lines if x.startswith("@node ")), None)
        if not node:
            continue
        kernel = next((x[8:].strip() for x in lines if x.startswith("@kernel ")), None)
        out[node] = {"kernel": kernel,
                     "cpuinfo": "\n".join(x for x in lines if not x.startswith("@"))}
    return out


def feature_lines(nodes, probed):
    """The Features= line of each node: its features with the CPU-model one
    replaced by what its cpuinfo says (uarch.slug), and a comment naming the CPU."""
    cpu_words = fleet_slurm.cpu_features()
    lines = []
    for n in sorted(nodes, key=lambda n: hostlist.natural(n.get("NodeName"))):
        name = n.get("NodeName")
        have = fleet_slurm.features(n)
        if name not in probed:
            lines.append(f"# NodeName={name}: not probed (not usable or did not answer)")
            continue
        cpu = fleet_slurm.cpu_of(probed[name]["cpuinfo"])
        slug = fleet_slurm.feature_of(cpu)
        kept = [f for f in have if f not in cpu_words]
        new = ([slug] if slug else []) + kept
        label = uarch.label(cpu) if cpu else "no /proc/cpuinfo"
        note = "" if slug else "; unknown to core/uarch.py: no CPU-model feature"
        lines.append(f"NodeName={name} Features={','.join(new) or '(none)'}"
                     f"    # {label}, kernel {probed[name].get('kernel')}{note}"
                     + ("" if set(new) == set(have) else f" (now: {','.join(have) or 'none'})"))
    return lines


def probe(cluster, choice, timeout=60):
    """{node: {"kernel", "cpuinfo"}} of the chosen nodes (node_choice.choose's
    choice), asked through one srun; a node that did not answer is not there."""
    names = choice["nodelist"]
    cmd = ["srun", f"--partition={choice['partition']}", f"--nodes={len(names)}",
           f"--nodelist={','.join(names)}", "--ntasks-per-node=1", "--cpu-bind=none",
           f"--immediate={timeout}", "--label", "--job-name=vdsobench-features",
           "sh", "-c", FEATURE_PROBE]
    return parse_srun_labels(cluster.call(cmd, timeout=timeout + 60))
