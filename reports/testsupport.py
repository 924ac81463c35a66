"""Shared helpers of the reports' tests (and the CLI's tests that read the same
fixtures): the committed fixtures, a Zen 5 copy of one, and what a chart file
or figure shows. Test modules import helpers from here, never from each other
(scripts/vdsobench_cli/tests/import_graph_test.py checks)."""

import copy
import json
import struct
import xml.etree.ElementTree as ET
from pathlib import Path

from reports import plots_layout
from vdsobench_cli.core import paired, vocab

ROOT = Path(__file__).resolve().parents[1]
TESTDATA = Path(__file__).resolve().parent / "testdata"
SMALL = ROOT / "scripts" / "vdsobench_cli" / "tests" / "testdata" / "results_small.json"
# What the merged table of the two committed machines is cut to.
SELECTION = dict(variants=["x86_gtod_raw_copy+rdtscp+always", "sys/vdso"],
                 clocks=["monotonic", "monotonic_raw"])


def fixture(name):
    """(file name, results) of a fixture in reports/testdata, or of a path."""
    path = TESTDATA / name if "/" not in name else Path(name)
    return str(path.name), json.loads(path.read_text())


def paired_rounds(row, before_ns, after_ns):
    """The record (core/paired.py) of a row's ((clock, mode)) paired rounds,
    numbered from 0 on CPU 1, as a node's file gives the fleet's review."""
    return paired.PairedRounds(vocab.GroupKey(*row, 1), "before", "after",
                               tuple(range(len(before_ns))), tuple(before_ns), tuple(after_ns))


def zen5(data):
    """A copy of a results file whose CPU is family 26 model 2 (an AMD Zen 5,
    Turin): the amd-epyc.json fixture edited here, not a run on a Zen 5."""
    data = copy.deepcopy(data)
    cpu = data["context"]["vdsobench"]["fingerprint"]["cpu"]
    cpu.update(family=26, model=2, stepping=1)
    return data


def png_size(path):
    """(width, height) from a PNG's IHDR; AssertionError unless it is a PNG."""
    data = Path(path).read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path}: not a PNG"
    assert data[12:16] == b"IHDR", f"{path}: no IHDR first"
    return struct.unpack(">II", data[16:24])


def svg_size(path):
    """(width, height) in points of an SVG's root; AssertionError unless it is one."""
    root = ET.parse(path).getroot()
    assert root.tag.endswith("}svg") or root.tag == "svg", f"{path}: root is {root.tag}"
    return tuple(float(root.get(k).removesuffix("pt")) for k in ("width", "height"))


def all_text(fig):
    """Every visible text, lines joined (a caption wraps anywhere)."""
    return " ".join(t.get_text().replace("\n", " ") for t in plots_layout.visible_texts(fig))


def fig_title(fig):
    return " ".join(t.get_text().replace("\n", " ") for t in fig.texts + [
        ax.title for ax in fig.axes])


RUNS = ROOT / "results" / "runs"
ZEN3_RUN = RUNS / "vm-20261130-023606-506575a6a7a9.json"  # a default run, cpus 0 and 1
ZEN4_RUN = RUNS / "vm-20261201-074034-96418f799eff.json"  # a default run, cpu 0


def without_rdtscp(data):
    """A copy of a recorded default run as a machine without RDTSCP would have
    written it: no rdtscp flag, and its default counter read, lfence_rdtsc."""
    data = copy.deepcopy(data)
    data["context"]["vdsobench"]["fingerprint"]["cpu"]["flags"]["rdtscp"] = False
    for b in data["benchmarks"]:
        for k in ("name", "run_name"):
            if k in b:
                b[k] = b[k].replace("+rdtscp+", "+lfence_rdtsc+")
    return data
