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


def garbage_tarballs(directory):
    """[(what, path, words the refusal must say)] of kernel "tarballs" that
    are none, written into directory: random bytes, an empty file, a valid xz
    of bytes that are no tar, random bytes under gzip's suffix and under
    plain tar's, an xz of a tar with no members, one whose files are under no
    top folder, and a real one cut short. import must refuse each in one line
    naming the file and what is wrong."""
    import io
    import lzma
    import os
    import tarfile
    from pathlib import Path

    def tar_xz(name, members):
        path = Path(directory, name)
        with tarfile.open(path, "w:xz") as tar:
            for member, body in members:
                member.size = len(body)
                tar.addfile(member, io.BytesIO(body))
        return path

    def raw(name, data):
        path = Path(directory, name)
        path.write_bytes(data)
        return path

    noise = os.urandom(4096)
    out = [
        ("random bytes", raw("x.tar.xz", noise),
         ("x.tar.xz: not an xz-compressed tar archive", "(xz: File format not recognized)")),
        ("an empty file", raw("empty.tar.xz", b""),
         ("empty.tar.xz: an empty file, not a tar archive",)),
        ("an xz of no tar", raw("data.tar.xz", lzma.compress(noise)),
         ("data.tar.xz: xz-compressed, but not a tar archive",
          "This does not look like a tar archive")),
        ("random bytes as .tar.gz", raw("x.tar.gz", noise),
         ("x.tar.gz: not a gzip-compressed tar archive", "(gzip: ")),
        ("random bytes as .tar", raw("x.tar", noise),
         ("x.tar: not a tar archive", "This does not look like a tar archive")),
        ("a tar with no members", tar_xz("none.tar.xz", []),
         ("none.tar.xz: a tar archive with no members",)),
        ("no top folder", tar_xz("flat.tar.xz", [(tarfile.TarInfo("Makefile"), b"x\n"),
                                                 (tarfile.TarInfo("lib/f"), b"x\n")]),
         ("flat.tar.xz: not a kernel source tarball", "'Makefile' is under no top folder")),
    ]
    whole = tar_xz("whole.tar.xz", [(tarfile.TarInfo("linux-x/Makefile"), os.urandom(1 << 20))])
    cut = raw("cut.tar.xz", whole.read_bytes()[:200000])
    whole.unlink()
    out.append(("a tarball cut short", cut,
                ("cut.tar.xz: an xz-compressed tar archive that is damaged",
                 "(xz: Unexpected end of input)")))
    return out
