"""Which nodes a fleet job asks for: the cluster a request names, the
partition's usable nodes (by state, name and architecture) under the
constraint, all of them, N (Slurm picks) or one per CPU-model feature.
check_request() asks before anything is built: a wrong partition or
feature costs no bundle."""

from vdsobench_cli.cli import targets
from vdsobench_cli.cli.errors import UsageError
from vdsobench_cli.core import hostlist
from vdsobench_cli.fleet import fleet_slurm, options


def cluster_of(slurm_conf=None):
    """The cluster of --slurm-conf (else $SLURM_CONF, else Slurm's default)."""
    fleet_slurm.check_clients()
    return fleet_slurm.Cluster(fleet_slurm.conf_path(slurm_conf))


def choose(nodes, partitions, partition=None, constraint=None, count=None,
           one_per_feature=False, arch=None):
    """Which nodes a job asks for. nodes and partitions: records of `scontrol
    show node|partition -o`. count: an int or "all". Returns {"partition",
    "nodelist" (names, or None: Slurm picks `count`), "count", "skipped":
    [(node, why)], "groups": {feature: [nodes]} with one_per_feature}.
    UsageError for an unknown partition or feature, or too few nodes."""
    names = [p.get("PartitionName") for p in partitions if p.get("PartitionName")]
    if partition is None:
        default = [p["PartitionName"] for p in partitions if p.get("Default") == "YES"]
        if not default:
            raise UsageError(f"the cluster has no default partition: choose one with "
                             f"--partition (valid: {', '.join(names) or 'none'})")
        partition = default[0]
    elif partition not in names:
        raise UsageError(f"--partition {partition!r} is not a partition of this cluster "
                         f"(valid: {', '.join(names) or 'none'})")
    record = next(p for p in partitions if p.get("PartitionName") == partition)
    try:
        members = set(hostlist.expand(record.get("Nodes")))
    except ValueError as e:
        raise UsageError(f"partition {partition}: Slurm's list of its nodes is {e}") from None
    inside = [n for n in nodes if n.get("NodeName") in members]
    known = sorted({f for n in inside for f in fleet_slurm.features(n)})
    if constraint:
        unknown = [w for w in fleet_slurm.constraint_words(constraint) if w not in known]
        if unknown:
            raise UsageError(f"--constraint {constraint!r}: no node of partition {partition} "
                             f"has the feature {unknown[0]!r} (valid: {', '.join(known) or 'none'}"
                             "; `fleet features` prints the CPU-model features to add)")
    simple = fleet_slurm.simple_constraint(constraint) if constraint else ("&", [])
    if simple is None and (count == "all" or one_per_feature):
        raise UsageError(f"--constraint {constraint!r}: with --nodes all or --one-per-feature "
                         "give features joined by & or by | (no brackets, counts or "
                         "parentheses; fleet picks the nodes itself)")
    skipped, candidates = [], []
    for n in sorted(inside, key=lambda n: hostlist.natural(n.get("NodeName"))):
        name = n.get("NodeName")
        if constraint and simple and not fleet_slurm.matches(fleet_slurm.features(n), constraint):
            continue
        ok, why = fleet_slurm.usable(n)
        if not fleet_slurm.is_name(name):  # it would go to sbatch's --nodelist
            ok, why, name = False, "not a Slurm node name", fleet_slurm.shown(name)
        if ok and arch and n.get("Arch") not in (None, "", "(null)", arch):
            ok, why = False, f"its architecture is {n.get('Arch')}, the bundle's {arch}"
        if ok:
            candidates.append(n)
        else:
            skipped.append((name, fleet_slurm.printable(why, 500)))  # a node's own words
    out = {"partition": partition, "skipped": skipped, "groups": None}
    if one_per_feature:
        groups = {}
        cpu_words = fleet_slurm.cpu_features()
        for n in candidates:
            model = [f for f in fleet_slurm.features(n) if f in cpu_words]
            groups.setdefault(",".join(model) or "(no CPU-model feature)", []).append(n)
        # an idle node of each model where there is one, else the first
        chosen = [min(g, key=lambda n: fleet_slurm.state_words(n.get("State"))[0] != "IDLE")
                  for g in groups.values()]
        out["groups"] = {k: [n["NodeName"] for n in g] for k, g in groups.items()}
        candidates = chosen
    if not candidates:
        raise UsageError(f"no usable node in partition {partition}"
                         + (f" with --constraint {constraint!r}" if constraint else "")
                         + (": " + "; ".join(f"{n} {w}" for n, w in skipped) if skipped else ""))
    if count == "all" or one_per_feature:
        out["nodelist"] = [n["NodeName"] for n in candidates]
        out["count"] = len(candidates)
        return out
    if count > len(candidates):
        raise UsageError(f"--nodes {count}: partition {partition} has {len(candidates)} usable "
                         f"node{'s' if len(candidates) != 1 else ''}"
                         + (f" with --constraint {constraint!r}" if constraint else "")
                         + f" (valid: 1 to {len(candidates)}, or all)")
    out["nodelist"], out["count"] = None, count
    return out


def check_request(request, who="fleet run"):
    """The nodes asked for (an options.JobRequest) and the directories, before
    anything is built: (jobs_dir, cluster)."""
    if request.nodes is None and not request.one_per_feature:
        raise UsageError(f"{who}: say which nodes: --nodes N, --nodes all or "
                         "--one-per-feature")
    if request.nodes is not None and request.one_per_feature:
        raise UsageError(f"{who}: --nodes and --one-per-feature exclude each other")
    jobs_dir = options.jobs_path(request.jobs_dir)
    fleet_slurm.checked(fleet_slurm.shared_path, "--jobs-dir", str(jobs_dir))
    fleet_slurm.checked(fleet_slurm.node_path, "--node-tmp", request.node_tmp)
    targets.check_out_dir(jobs_dir)
    cluster = cluster_of(request.slurm_conf)
    # the nodes first: a wrong partition or feature costs no bundle build
    choose(cluster.nodes(), cluster.partitions(), request.partition, request.constraint,
           request.nodes, request.one_per_feature)
    return jobs_dir, cluster
