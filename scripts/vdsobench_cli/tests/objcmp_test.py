"""objcmp.py on recorded objdump output (Debian's linux-source-6.12 with
config.amd64_none_amd64, gcc 12: kbuild's __vdso_time and the shim build's),
and on small synthetic functions for each thing it sets aside."""

import unittest

from vdsobench_cli.kimport import objcmp
from vdsobench_cli.cli.errors import UsageError

KBUILD_TIME = """
0000000000000400 <__vdso_time>:
 400:	endbr64
 404:	lea    0x0(%rip),%rax        # 40b <__vdso_time+0xb>
			407: R_X86_64_PC32	timens__vdso_data-0x4
 40b:	lea    0x0(%rip),%rdx        # 412 <__vdso_time+0x12>
			40e: R_X86_64_PC32	vvar__vdso_data-0x4
 412:	cmpl   $0x7fffffff,0x0(%rip)        # 41c <__vdso_time+0x1c>
			414: R_X86_64_PC32	vvar__vdso_data-0x4
 41c:	cmovne %rdx,%rax
 420:	mov    0x28(%rax),%rax
 424:	test   %rdi,%rdi
 427:	je     42c <__vdso_time+0x2c>
 429:	mov    %rax,(%rdi)
 42c:	ret
 42d:	int3
 42e:	xchg   %ax,%ax
"""
P = "kernel_6_2e12__rdtsc__always__"
SHIM_TIME = f"""
0000000000000240 <{P}time>:
 240:	endbr64
 244:	lea    0x0(%rip),%rax        # 24b <{P}time+0xb>
			247: R_X86_64_PC32	{P}vvar_area+0xffc
 24b:	cmpl   $0x7fffffff,0x0(%rip)        # 255 <{P}time+0x15>
			24d: R_X86_64_PC32	{P}vvar_area-0x4
 255:	lea    -0x1000(%rax),%rdx
 25c:	cmovne %rdx,%rax
 260:	mov    0x28(%rax),%rax
 264:	test   %rdi,%rdi
 267:	je     26c <{P}time+0x2c>
 269:	mov    %rax,(%rdi)
 26c:	ret
 26d:	int3
 26e:	xchg   %ax,%ax
"""


def func(name, body, base=0x100):
    lines = [f"{base:016x} <{name}>:"]
    for i, insn in enumerate(body):
        if insn.startswith("R_"):
            lines.append(f"\t\t\t{base + i:x}: {insn}")
        else:
            lines.append(f" {base + i * 4:x}:\t{insn}")
    return "\n".join(lines) + "\n\n"


class CompareTest(unittest.TestCase):
    def test_recorded_time_differs_only_in_the_namespace_page_address(self):
        diffs, na, nb = objcmp.compare(objcmp.parse(KBUILD_TIME), objcmp.parse(SHIM_TIME),
                                       "time", P)
        self.assertEqual((na, nb), (12, 12))
        self.assertEqual(diffs, [(["lea [vdso_data+0x0](%rip),%rdx"], []),
                                 ([], ["lea -0x1000(%rax),%rdx"])])
        # the same data references on both sides once the relocations are named
        a = objcmp.sequence(objcmp.parse(KBUILD_TIME), "__vdso_time", "")
        b = objcmp.sequence(objcmp.parse(SHIM_TIME), P + "time", P)
        self.assertIn("lea [timens_data+0x0](%rip),%rax", a)
        self.assertIn("lea [timens_data+0x0](%rip),%rax", b)
        self.assertIn("cmpl $0x7fffffff,[vdso_data+0x0](%rip)", b)

    def test_identical_but_for_addresses_prefix_and_counter_slot(self):
        k = func("__vdso_clock_gettime", ["push %rbp", "rdtsc", "nop", "nop", "nop",
                                          "jne 104 <__vdso_clock_gettime+0x4>", "ret"])
        s = func(P + "clock_gettime", ["push %rbp", "rdtscp",
                                       f"jne 208 <{P}clock_gettime+0x8>", "ret"], 0x200)
        diffs, _, _ = objcmp.compare(objcmp.parse(k), objcmp.parse(s), "clock_gettime", P)
        self.assertEqual(diffs, [])

    def test_a_changed_instruction_is_reported(self):
        k = func("__vdso_clock_gettime", ["push %rbp", "mov 0x24(%r10),%ecx", "ret"])
        s = func(P + "clock_gettime", ["push %rbp", "mov 0x20(%r10),%ecx", "ret"])
        diffs, _, _ = objcmp.compare(objcmp.parse(k), objcmp.parse(s), "clock_gettime", P)
        self.assertEqual(diffs, [(["mov 0x24(%r10),%ecx"], ["mov 0x20(%r10),%ecx"])])
        self.assertIn("- kbuild: mov 0x24(%r10),%ecx",
                      objcmp.text({"clock_gettime": {
                          "identical": False, "kbuild_instructions": 3,
                          "shim_instructions": 3, "differences": diffs}}))

    def test_local_callees_are_compared_calls_by_relocation(self):
        k = (func("__vdso_clock_gettime", ["call 300 <counter.constprop.0>", "ret"]) +
             func("counter.constprop.0", ["mov %rax,%rdx", "ret"], 0x300))
        s = func(P + "clock_gettime", ["mov %rax,%rdx", "ret", "ret"])
        diffs, na, _ = objcmp.compare(objcmp.parse(k), objcmp.parse(s), "clock_gettime", P)
        self.assertEqual(na, 6)  # <entry>, call, ret, then <callee> and its two
        self.assertTrue(diffs)
        s2 = func(P + "clock_gettime", [f"call 104 <{P}clock_gettime+0x4>",
                                        f"R_X86_64_PLT32\t{P}fallback_clock_gettime-0x4",
                                        "ret"])
        seq = objcmp.sequence(objcmp.parse(s2), P + "clock_gettime", P)
        self.assertIn("call fallback_clock_gettime", seq)

    def test_missing_entry_is_bad_input(self):
        with self.assertRaisesRegex(UsageError, "clock_gettime: not in kbuild's object"):
            objcmp.compare({}, objcmp.parse(SHIM_TIME), "clock_gettime", P)
        with self.assertRaisesRegex(UsageError, "no <prefix>__clock_gettime"):
            objcmp.shim_prefix(objcmp.parse(KBUILD_TIME))

    def test_cli_bad_file_is_exit_2(self):
        with self.assertRaises(SystemExit) as e:
            objcmp.main(["--symbol", "nosuch", "a.o", "b.o"])
        self.assertEqual(e.exception.code, 2)
        self.assertEqual(objcmp.main(["/nonexistent/a.o", "/nonexistent/b.o"]), 2)


if __name__ == "__main__":
    unittest.main()
