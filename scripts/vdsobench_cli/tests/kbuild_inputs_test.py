"""kimport/kbuild_inputs.py on small fake trees: the files a folder's kbuild
was compiled from, as its .cmd files name them (hostile names left out), and
the key a folder's kbuild is cached under, which an edit of one of them
changes. A real tree's: kernel_import_folder_test. No make runs here."""

import hashlib
import os
import tempfile
import unittest
from pathlib import Path

from vdsobench_cli.kimport import kbuild_inputs, kbuild_tree

V = kbuild_tree.VDSO_DIR
CMD = f"""savedcmd_{V}/vclock_gettime.o := gcc -Wp,-MMD -c -o {V}/vclock_gettime.o {V}/vclock_gettime.c

source_{V}/vclock_gettime.o := {V}/vclock_gettime.c

deps_{V}/vclock_gettime.o := \\
    $(wildcard include/config/X86_64) \\
  include/linux/compiler-version.h \\
  arch/x86/include/asm/msr.h \\
  include/generated/autoconf.h \\
  /usr/lib/gcc/x86_64-linux-gnu/12/include/stdarg.h \\
  ../../etc/passwd \\
  arch/x86/entry/vdso/../../../../lib/vdso/gettimeofday.c \\
  arch/../../escape.h \\
  include/linked/x.h \\

{V}/vclock_gettime.o: $(deps_{V}/vclock_gettime.o)

$(deps_{V}/vclock_gettime.o):
"""
SOURCES = {f"{V}/vclock_gettime.c": "c", "include/linux/compiler-version.h": "v",
           "arch/x86/include/asm/msr.h": "rdtsc_ordered", "include/real/x.h": "x",
           "lib/vdso/gettimeofday.c": "do_hres"}


def write(root, files):
    for rel, text in files.items():
        Path(root, rel).parent.mkdir(parents=True, exist_ok=True)
        Path(root, rel).write_text(text)


class InputsTest(unittest.TestCase):
    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.folder = Path(tmp.name, "linux")  # the developer's tree
        self.built = Path(tmp.name, "copy")  # kbuild's copy of it, built
        for root in (self.folder, self.built):
            write(root, SOURCES)
            os.symlink("real", Path(root, "include", "linked"))
        write(self.built, {f"{V}/.vclock_gettime.o.cmd": CMD,
                           "include/generated/autoconf.h": "generated"})

    def fd(self, path):
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
        self.addCleanup(os.close, fd)
        return fd

    def test_the_cmd_files_names_less_what_is_no_plain_path(self):
        self.assertEqual(kbuild_inputs.listed(self.fd(self.built)),
                         [f"{V}/vclock_gettime.c", "arch/x86/include/asm/msr.h",
                          "include/generated/autoconf.h", "include/linked/x.h",
                          "include/linux/compiler-version.h", "lib/vdso/gettimeofday.c"])

    def test_the_record_keeps_the_folders_own_files(self):
        rec = kbuild_inputs.recorded(self.fd(self.built), self.folder)
        # the generated header is the build's, the linked one below a link
        self.assertEqual(rec["paths"], [f"{V}/vclock_gettime.c", "arch/x86/include/asm/msr.h",
                                        "include/linux/compiler-version.h",
                                        "lib/vdso/gettimeofday.c"])
        self.assertEqual(rec["sha256"], kbuild_inputs.digest(self.folder, rec["paths"]))

    def test_an_edit_is_another_key_and_its_undoing_the_first(self):
        rec = {"inputs": kbuild_inputs.recorded(self.fd(self.built), self.folder)}
        records = {"k": rec}
        key = kbuild_inputs.current_key("k", records.get, self.folder)
        self.assertEqual(key, "k")
        msr = Path(self.folder, "arch/x86/include/asm/msr.h")
        msr.write_text("rdtsc_ordered, edited")
        edited = kbuild_inputs.current_key("k", records.get, self.folder)
        now = kbuild_inputs.digest(self.folder, rec["inputs"]["paths"])
        self.assertEqual(edited, hashlib.sha256(f"k\0{now}".encode()).hexdigest())
        # that key's own record, once built, holds while the folder stays so
        records[edited] = {"inputs": {"paths": rec["inputs"]["paths"], "sha256": now}}
        self.assertEqual(kbuild_inputs.current_key("k", records.get, self.folder), edited)
        msr.unlink()  # a file gone is a change too
        self.assertNotIn(kbuild_inputs.current_key("k", records.get, self.folder),
                         ("k", edited))
        msr.write_text("rdtsc_ordered")
        self.assertEqual(kbuild_inputs.current_key("k", records.get, self.folder), "k")

    def test_no_record_or_none_listed_is_the_key(self):
        self.assertEqual(kbuild_inputs.current_key("k", {}.get, self.folder), "k")
        self.assertEqual(kbuild_inputs.current_key("k", {"k": {"line": "x"}}.get,
                                                   self.folder), "k")


if __name__ == "__main__":
    unittest.main()
