#!/usr/bin/python3
"""Print the C table upstream_diff_test.c checks a lib/vdso rebuild against.

Usage: upstream_lines.py NAME HEADER TAG BLOB UPSTREAM_FILE

NAME is the table's C identifier, HEADER the rebuild (impls/layouts/...),
TAG and BLOB the upstream version (git tag, and `git hash-object` of the
file, which cites exactly which text it was), UPSTREAM_FILE that text, e.g.
`git -C linux show v6.10:lib/vdso/gettimeofday.c > /tmp/v6.10.c`. Each
line of the upstream file becomes its 32-bit FNV-1a hash: the test can tell
which lines of HEADER are upstream's without the project carrying the text
a second time.
"""
import subprocess
import sys


def fnv1a32(data):
    h = 0x811C9DC5
    for b in data:
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    return h


def main(argv):
    if len(argv) != 5:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    name, header, tag, blob, path = argv
    with open(path, "rb") as f:
        data = f.read()
    got = subprocess.run(["git", "hash-object", path], capture_output=True,
                         text=True).stdout.strip()
    if got and not got.startswith(blob):
        print(f"upstream_lines.py: {path} is blob {got[:12]}, not {blob}",
              file=sys.stderr)
        return 1
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    hashes = [fnv1a32(line) for line in lines]
    print(f"/* lib/vdso/gettimeofday.c @ {tag} (blob {blob}): {len(hashes)} lines */")
    print(f"static const u32 {name}[] = {{")
    for i in range(0, len(hashes), 6):
        print("\t" + " ".join(f"0x{h:08x}," for h in hashes[i:i + 6]))
    print("};")
    print(f'#define {name.upper()}_SOURCE "{header}", "{tag}", "{blob}", '
          f"{name}, ARRAY_SIZE({name})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
