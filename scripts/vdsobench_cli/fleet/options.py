"""A fleet job's request, typed: the cluster, the nodes and the limits that
`fleet run` and `recipe patch-review --fleet` ask for (their options are
added here, so both take the same ones), as one JobRequest the library
takes instead of the command's argparse namespace."""

import argparse
import dataclasses
from pathlib import Path

from vdsobench_cli.cli import build, ranged
from vdsobench_cli.fleet import fleet_slurm

TIMEOUT = ranged.number(1, 7 * 86400)  # seconds a job may stay pending
TOLERANCE = ranged.number(0, 10)  # a fraction: 0.1 is 10%
DEFAULT_TIMEOUT_S = 600
DEFAULT_TOLERANCE = 0.10


node_count = ranged.number(1, 100000, whole=True, words=("all",))
PARTITION = fleet_slurm.argtype(fleet_slurm.slurm_name, "partition")
JOB = fleet_slurm.argtype(fleet_slurm.job_id)


def default_jobs_dir():
    return build.ROOT / "results" / "fleet"


def jobs_path(given):
    """The jobs directory: --jobs-dir as given, else default_jobs_dir(), absolute."""
    return Path(given or default_jobs_dir()).resolve()


@dataclasses.dataclass(frozen=True)
class JobRequest:
    """What a job asks of the cluster: add_job_options()'s values (bundle:
    `fleet run --bundle`; argv: the command line, kept in the job's record)."""
    nodes: object = None  # an int, "all", or None with one_per_feature
    one_per_feature: bool = False
    partition: str = None
    constraint: str = None
    exclusive: bool = True
    timeout: float = DEFAULT_TIMEOUT_S
    time: str = None
    node_tmp: str = "/tmp"
    jobs_dir: str = None
    slurm_conf: str = None
    bundle: str = None
    argv: tuple = ()

    @classmethod
    def from_args(cls, args):
        """The request of a parsed command line (fleet run's, or patch-review's)."""
        return cls(**{f.name: getattr(args, f.name) for f in dataclasses.fields(cls)
                      if f.name != "argv" and hasattr(args, f.name)},
                   argv=tuple(getattr(args, "argv", ())))


def add_cluster_options(p):
    p.add_argument("--slurm-conf", metavar="FILE",
                   help="the cluster's slurm.conf (default: $SLURM_CONF, else "
                        f"{fleet_slurm.DEFAULT_CONF})")
    p.add_argument("--jobs-dir", metavar="DIR",
                   help="where jobs keep their files, on a file system the nodes share with "
                        "this machine (default results/fleet in this clone)")


def add_job_options(p):
    """The cluster and the nodes a job asks for: fleet run's and
    recipe patch-review --fleet's."""
    add_cluster_options(p)
    p.add_argument("--partition", metavar="P", type=PARTITION,
                   help="the partition (default: the cluster's)")
    p.add_argument("--constraint", metavar="FEATURES", type=fleet_slurm.argtype(
                       fleet_slurm.constraint),
                   help="Slurm features the nodes must have: zen5, zen5|sapphirerapids, a&b")
    p.add_argument("--nodes", metavar="N|all", type=node_count,
                   help="how many nodes (Slurm picks them), or all usable ones")
    p.add_argument("--one-per-feature", action="store_true",
                   help="one node of each CPU model (the features `fleet features` names)")
    p.add_argument("--exclusive", action=argparse.BooleanOptionalAction, default=True,
                   help="whole nodes, nothing else on them (default; --no-exclusive shares)")
    p.add_argument("--timeout", metavar="S", type=TIMEOUT, default=DEFAULT_TIMEOUT_S,
                   help=f"cancel the job if still pending after S seconds (default "
                        f"{DEFAULT_TIMEOUT_S}; {TIMEOUT.valid})")
    p.add_argument("--time", metavar="LIMIT", type=fleet_slurm.argtype(fleet_slurm.time_limit),
                   help="Slurm's time limit for the job (sbatch --time; default the "
                        "partition's)")
    p.add_argument("--node-tmp", metavar="DIR", default="/tmp",
                   type=fleet_slurm.argtype(fleet_slurm.node_path),
                   help="node-local directory the payload is copied to and unpacked in "
                        "(default /tmp; an absolute path of letters, digits, . _ + - /)")
