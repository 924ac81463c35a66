"""Shared test fixtures: a small variant list as vdsobench_verify --list-json
prints it, and what a live compare may end with."""

import json

from reports import tables, vocab

# A live compare is a timing, so a test of its plumbing takes any of these:
# exit 1 is a live "slower", or no verdict because the CPU was lost (another
# process ran on it, say a second suite on a 2-CPU machine), which is the
# lost-CPU check working, never a failure of the test.
LIVE_COMPARE_EXITS = (0, 1)
LIVE_VERDICTS = ("faster", "slower", "no significant difference", tables.NO_VERDICT)


def variant(name, known_bad=None, hres=("realtime", "monotonic", "tai"), raw=()):
    layout, counter, inline = vocab.split_variant(name)
    return {"name": name, "layout": layout, "counter": counter, "inline": inline,
            "source": f"impls/layouts/{layout}.c", "summary": "", "known_bad": known_bad,
            "hres_clocks": list(hres), "coarse_clocks": ["realtime_coarse", "monotonic_coarse"],
            "raw_clocks": list(raw), "has_getres": True, "has_timens": False,
            "real_counter": counter != "fake", "data_size": 64, "vvar_size": 4096,
            "fields": [{"name": "seq", "offset": 0, "size": 4}]}


VARIANTS = [
    variant("generic_5_3+rdtscp+always"),
    variant("generic_5_3+rdtsc+always"),
    variant("x86_4_19+rdtscp+always", raw=("monotonic_raw",)),
    variant("torn_read+fake+always", known_bad="reads the seqcount once"),
]
LIST_JSON = json.dumps(VARIANTS)


def block_modules(directory, modules=("numpy", "scipy", "matplotlib", "jsonschema")):
    """Make `directory` a path entry that hides these modules: each becomes a
    package whose import raises ImportError, as on a machine without them.
    Put it first on PYTHONPATH; returns the directory."""
    from pathlib import Path
    for m in modules:
        pkg = Path(directory, m)
        pkg.mkdir(parents=True, exist_ok=True)
        (pkg / "__init__.py").write_text(
            f'raise ImportError("{m} is blocked: this test plays a machine without it")\n')
    return str(directory)
