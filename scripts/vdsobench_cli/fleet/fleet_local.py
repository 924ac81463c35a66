"""`fleet local-cluster up|down`: a real Slurm on this machine, for the tests and for trying fleet.

    munged      with a key made here (1 KiB from os.urandom, mode 0400), its
                socket in the cluster's directory
    slurmctld   the controller, on a free loopback port
    slurmd x2   nodes n1 and n2 (slurmd -N), both NodeHostname=localhost on
                their own ports, each started under `taskset -c CPU` with a
                CPU of its own (TaskPlugin=task/none, so a job step keeps the
                affinity it inherits from its slurmd: two nodes, two CPUs)

Everything (slurm.conf, key, state, spool, pid and log files) is in one
directory, by default $TMPDIR/vdsobench-local-cluster; nothing is installed as
a service and no systemd is needed. Each node's features are this machine's
CPU model as `fleet features` names it (core/uarch.py's slug, e.g. zen5)
plus a test feature of its own (local_n1, local_n2): both nodes are the same
CPU, so only the test features tell them apart to --constraint.

No accounting daemon (AccountingStorageType=accounting_storage/none, so no
sacct): jobs are remembered by the controller for an hour (MinJobAge) and
logged by jobcomp/filetxt (log/jobcomp.txt), which is where fleet's failure
reasons come from on this cluster.

`down` cancels the cluster's jobs, stops the daemons it started (by the pids
it recorded, each checked to still be that daemon), stops any job process
left behind (those whose environment names this cluster's slurm.conf), and
removes the directory. It is safe to run twice, and after a failed `up`.

It runs as root on a directory that may be in /tmp, so it takes nothing
there on trust: the directory's path goes into slurm.conf and must be
nothing but a path (fleet_slurm.conf_dir); `up` makes it itself (mode 0700)
and refuses one it did not make; `down` removes only a directory that is
this machine's root's, writable by no one else, and marked as a local
cluster's (its cluster.json or the first line of its slurm.conf), and stops
only processes whose command line names that directory's files.
"""

import json
import os
import shutil
import stat
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from vdsobench_cli.fleet import fleet_slurm
from vdsobench_cli.cli import atomic, packages
from vdsobench_cli.cli.errors import Failure, UsageError

NODES = ("n1", "n2")
DAEMONS = ("munged", "slurmctld", *NODES)
RECORD = "cluster.json"
RECORD_MAX = 64 << 10
PARTITION = "local"
START_TIMEOUT_S = 60
STOP_GRACE_S = 10

CONF = """\
# vdsobench fleet local-cluster: written by scripts/vdsobench fleet local-cluster up
ClusterName=vdsolocal
SlurmctldHost=localhost
SlurmctldPort={ctld_port}
SlurmdPort={slurmd_port}
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={dir}/munge.socket
SlurmUser=root
SlurmdUser=root
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/filetxt
JobCompLoc={dir}/log/jobcomp.txt
MpiDefault=none
MailProg=/bin/true
ReturnToService=2
MinJobAge=3600
FirstJobId={first_job}
KillWait=5
StateSaveLocation={dir}/state
SlurmdSpoolDir={dir}/spool/%n
SlurmctldPidFile={dir}/slurmctld.pid
SlurmdPidFile={dir}/slurmd-%n.pid
SlurmctldLogFile={dir}/log/slurmctld.log
SlurmdLogFile={dir}/log/slurmd-%n.log
{nodes}
PartitionName={partition} Nodes={node_names} Default=YES MaxTime=INFINITE State=UP
"""
NODE_LINE = ("NodeName={name} NodeHostname=localhost Port={port} CPUs=1 "
             "Features={features} State=UNKNOWN")


def default_dir():
    return Path(tempfile.gettempdir()) / "vdsobench-local-cluster"


def free_ports(n):
    """n distinct TCP ports on the loopback nobody listens on now."""
    socks = []
    try:
        for _ in range(n):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def node_cpus(allowed, n=len(NODES)):
    """The CPU each node gets: the allowed CPUs in turn (the same one twice only
    on a machine that allows one)."""
    allowed = sorted(allowed)
    return [allowed[i % len(allowed)] for i in range(n)]


def node_features(machine_slug, name):
    """The features of a local node: the CPU model's slug (when known) and local_<name>."""
    return [f for f in (machine_slug, f"local_{name}") if f]


def first_job_id(now):
    """Job ids start from the clock (a tenth of a second, within Slurm's default
    MaxJobId of 67043328), so that a new local cluster's jobs do not take the
    ids, and the job directories, of an earlier one's."""
    return 1000 + int(now * 10) % 60000000


def render_conf(directory, ports, features, first_job=1):
    """slurm.conf for the cluster in directory; ports = (controller, slurmd,
    node ports...); features = {node: [feature...]}. Every value checked: a
    newline, space, '#' or '%' would be another setting, a comment or a pattern."""
    directory = fleet_slurm.checked(fleet_slurm.conf_dir, "local-cluster --dir", str(directory))
    for n in [*ports, first_job]:
        if not isinstance(n, int) or isinstance(n, bool) or not 0 < n < 1 << 31:
            raise ValueError(f"not a port or job id: {n!r}")
    for name in NODES:
        for f in features[name]:
            fleet_slurm.checked(fleet_slurm.slurm_name, "local-cluster", f, "feature")
    nodes = "\n".join(NODE_LINE.format(name=name, port=port, features=",".join(features[name]))
                      for name, port in zip(NODES, ports[2:]))
    return CONF.format(dir=directory, ctld_port=ports[0], slurmd_port=ports[1], nodes=nodes,
                       partition=PARTITION, node_names=",".join(NODES), first_job=first_job)


def this_machine_slug():
    cpu = fleet_slurm.cpu_of(Path("/proc/cpuinfo").read_text(errors="replace"))
    return fleet_slurm.feature_of(cpu)


# ---- processes ------------------------------------------------------------------------------


def cmdline(pid):
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return None


def ours(pid, marker):
    """Whether pid is alive and its command line mentions marker (our conf or
    socket): a pid recorded earlier may have been reused by then."""
    args = cmdline(pid)
    return bool(args) and any(marker.encode() in a for a in args)


def environ_has(pid, text):
    try:
        return text.encode() in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    except OSError:
        return False


def job_processes(conf):
    """Pids of processes the cluster's jobs left (their environment holds
    SLURM_CONF=<conf>, which slurmd gives every job step)."""
    mark = f"SLURM_CONF={conf}"
    me = os.getpid()
    return [int(p) for p in os.listdir("/proc")
            if p.isdigit() and int(p) != me and environ_has(int(p), mark)]


def stop_pids(pids, grace=STOP_GRACE_S):
    """SIGTERM, then SIGKILL after grace, to each of pids still alive."""
    for pid in pids:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + grace
    alive = list(pids)
    while alive and time.monotonic() < deadline:
        time.sleep(0.1)
        alive = [p for p in alive if os.path.exists(f"/proc/{p}") and not zombie(p)]
    for pid in alive:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def zombie(pid):
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return True


def start(args, log):
    """A daemon in its own session, outliving this command (down stops it)."""
    with open(log, "ab") as out:
        try:
            proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=out,
                                    stderr=subprocess.STDOUT, start_new_session=True)
        except OSError as e:
            raise Failure(f"local-cluster: cannot start {args[0]}: {e.strerror or e}") from None
    return proc.pid


def log_tail(path, n=3):
    try:
        lines = [line for line in Path(path).read_text(errors="replace").splitlines()
                 if line.strip()]
    except OSError:
        return "(no log)"
    return " | ".join(lines[-n:]) or "(empty log)"


def wait_for(what, ready, timeout, log, pid):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if ready():
            return
        if pid is not None and not ours_alive(pid):
            raise Failure(f"local-cluster: {what} exited at start: {log_tail(log)}")
        time.sleep(0.2)
    raise Failure(f"local-cluster: {what} not ready after {timeout} s: {log_tail(log)}")


def ours_alive(pid):
    return os.path.exists(f"/proc/{pid}") and not zombie(pid)


# ---- up and down ----------------------------------------------------------------------------


def cluster_dir(directory):
    """The cluster's directory, resolved, as slurm.conf may name it; UsageError otherwise."""
    given = directory is not None
    path = Path(directory or default_dir()).resolve()
    where = "--dir" if given else "--dir (default $TMPDIR/vdsobench-local-cluster)"
    fleet_slurm.checked(fleet_slurm.conf_dir, f"local-cluster {where}", str(path))
    return path


def paths(directory):
    """What the cluster's processes are told, by the directory alone (never by
    what a file there says): conf, socket."""
    return str(directory / "slurm.conf"), str(directory / "munge.socket")


def read_record(directory):
    """The cluster's record, its pids checked (whole numbers above 1, daemons of
    ours by name); None when there is none or it is not one."""
    try:
        data = fleet_slurm.read_left(Path(directory) / RECORD, "cluster record", RECORD_MAX)
        record = json.loads(data.decode()) if data else None
    except (UsageError, ValueError, RecursionError):
        return None
    if not isinstance(record, dict) or record.get("dir") != str(directory):
        return None
    pids = record.get("pids")
    if not isinstance(pids, dict) or not all(
            name in DAEMONS and isinstance(pid, int) and not isinstance(pid, bool) and pid > 1
            for name, pid in pids.items()):
        return None
    return record


def marked(directory):
    """Whether directory is a local cluster's, as far as root may act on it: root's
    (this user's), writable by no one else, with a cluster record naming it or
    the slurm.conf `up` writes."""
    try:
        st = os.lstat(directory)
    except OSError:
        return False
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o022:
        return False
    if read_record(directory) is not None:
        return True
    try:
        head = fleet_slurm.read_left(directory / "slurm.conf", "slurm.conf", 1 << 20) or b""
    except UsageError:
        return False
    return head.decode(errors="replace").startswith(CONF.splitlines()[0] + "\n")


def running(record, directory):
    """Whether every daemon of a recorded cluster is still the one started."""
    conf, sock = paths(directory)
    pids = record.get("pids", {})
    return bool(pids) and all(ours(pid, sock if name == "munged" else conf)
                              for name, pid in pids.items())


def up(directory=None, out=print):
    """Start the cluster in directory; its record (conf, pids, cpus, features)."""
    directory = cluster_dir(directory)
    if os.geteuid() != 0:
        raise UsageError("local-cluster up needs root: slurmd starts each job as its user "
                         "(sudo scripts/vdsobench fleet local-cluster up)")
    packages.ensure_group(packages.SLURM_PACKAGES, "fleet local-cluster")
    record = read_record(directory)
    if record and marked(directory) and running(record, directory):
        out(f"local-cluster: already up in {directory}")
        return record
    if os.path.lexists(directory):
        down(directory, quiet=True)  # a stale or half-started one: clear it first
    directory.parent.mkdir(parents=True, exist_ok=True)
    try:  # made here, by us, 0700: nothing in it is anyone else's
        os.mkdir(directory, 0o700)
    except OSError as e:
        raise UsageError(f"local-cluster up: cannot make {directory}: {e.strerror or e} "
                         "(made by someone else meanwhile?)") from None
    os.chmod(directory, 0o700)
    for sub in ("state", "log", *(f"spool/{n}" for n in NODES)):
        (directory / sub).mkdir(parents=True, exist_ok=True)
    conf, sock = paths(directory)
    record = {"dir": str(directory), "conf": conf, "socket": sock, "pids": {},
              "partition": PARTITION}
    try:
        launch(directory, record)
    except BaseException:
        down(directory, quiet=True)
        raise
    out(f"local-cluster: up in {directory}: nodes "
        + ", ".join(f"{n} (CPU {c}, features {','.join(record['features'][n])})"
                    for n, c in zip(NODES, record["cpus"])))
    out(f"export SLURM_CONF={record['conf']}")
    return record


def launch(directory, record):
    def save():
        atomic.write_atomic(directory / RECORD, record, force=True, what="cluster record")

    save()  # first: it marks the directory as a local cluster's, for down
    key = directory / "munge.key"
    with open(os.open(key, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o400), "wb") as f:
        f.write(os.urandom(1024))
    ports = free_ports(2 + len(NODES))
    cpus = node_cpus(os.sched_getaffinity(0))
    slug = this_machine_slug()
    record["cpus"] = cpus
    record["features"] = {n: node_features(slug, n) for n in NODES}
    record["ports"] = ports
    Path(record["conf"]).write_text(render_conf(directory, ports, record["features"],
                                                first_job_id(time.time())))
    save()
    log = directory / "log"

    munged = start(["munged", "-F", "--force", f"--socket={record['socket']}",
                    f"--key-file={key}", f"--pid-file={directory}/munged.pid",
                    f"--seed-file={directory}/munged.seed",
                    f"--log-file={log}/munged.log"], log / "munged.out")
    record["pids"]["munged"] = munged
    save()
    wait_for("munged", lambda: os.path.exists(record["socket"]), 10, log / "munged.log", munged)

    ctld = start(["slurmctld", "-D", "-f", record["conf"]], log / "slurmctld.out")
    record["pids"]["slurmctld"] = ctld
    save()
    cluster = fleet_slurm.Cluster(record["conf"])

    def controller_up():
        try:
            cluster.call(["scontrol", "ping"], timeout=10)
            return True
        except (Failure, UsageError):
            return False
    wait_for("slurmctld", controller_up, START_TIMEOUT_S, log / "slurmctld.log", ctld)

    for name, cpu in zip(NODES, cpus):
        pid = start(["taskset", "-c", str(cpu), "slurmd", "-D", "-N", name, "-f", record["conf"]],
                    log / f"slurmd-{name}.out")
        record["pids"][name] = pid
        save()

    def nodes_idle():
        try:
            states = {n.get("NodeName"): fleet_slurm.state_words(n.get("State"))[0]
                      for n in cluster.nodes()}
        except (Failure, UsageError):
            return False
        return all(states.get(n) == "IDLE" for n in NODES)
    wait_for("the nodes n1 and n2", nodes_idle, START_TIMEOUT_S, log / "slurmctld.log", None)
    for name in NODES:
        if not ours_alive(record["pids"][name]):
            raise Failure(f"local-cluster: slurmd {name} exited: "
                          f"{log_tail(log / f'slurmd-{name}.out')}")


def down(directory=None, quiet=False, out=print):
    """Stop everything the cluster in directory started and remove the directory."""
    directory = cluster_dir(directory)
    if not os.path.lexists(directory):
        if not quiet:
            out(f"local-cluster: nothing to stop in {directory}")
        return 0
    if not marked(directory):
        raise UsageError(f"local-cluster down: {directory} is not a local cluster's directory "
                         "(one `up` made: this user's, mode 0700, with its cluster.json or "
                         "slurm.conf): left as it is")
    record = read_record(directory) or {"pids": {}}
    (conf, sock), pids = paths(directory), record["pids"]
    if pids.get("slurmctld") and ours(pids["slurmctld"], conf):
        cluster = fleet_slurm.Cluster(conf)
        try:  # every job of this cluster, so their steps end before the nodes go
            jobs = [j.get("JobId") for j in fleet_slurm.parse_show(
                cluster.call(["scontrol", "show", "job", "-o"], timeout=15))]
            for job in filter(None, jobs):
                cluster.cancel(job)
        except (Failure, UsageError):
            pass
    # nodes first, then the controller, then munge: each by the pid it was started as
    order = [*NODES, "slurmctld", "munged"]
    for name in order:
        pid = pids.get(name)
        marker = sock if name == "munged" else conf
        if pid and ours(pid, marker):
            stop_pids([pid])
    stop_pids(job_processes(conf), grace=2)
    shutil.rmtree(directory, ignore_errors=True)
    if directory.exists():
        raise Failure(f"local-cluster down: could not remove {directory}")
    if not quiet:
        out(f"local-cluster: stopped and removed {directory}")
    return 0
