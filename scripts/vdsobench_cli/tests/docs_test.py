"""The README and docs/: every link resolves inside the tree, the README stays
short with the set-up commands on its first screen, and its command table
names every command the real `--help` lists."""

import re
import subprocess
import tempfile
import unittest
from pathlib import Path


def find_root():
    here = Path(__file__).resolve().parent
    for d in (here, *here.parents):
        if (d / "README.md").is_file() and (d / "WORKSPACE").is_file():
            return d
    raise RuntimeError(f"no repository root above {here}")


ROOT = find_root()
README = ROOT / "README.md"
MAX_README_LINES = 260
FIRST_SCREEN = 40

FENCE = re.compile(r"^ {0,3}(```|~~~).*?^ {0,3}\1", re.M | re.S)
CODE_SPAN = re.compile(r"(`+).+?\1", re.S)
# [text](target "title") and ![alt](target); reference definitions [x]: target
INLINE_LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+[\"'][^)]*[\"'])?\s*\)")
REF_DEF = re.compile(r"^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)", re.M)
EXTERNAL = re.compile(r"^[a-z][a-z0-9+.-]*:", re.I)
# a row of the command table: "| `NAME [options]` | does |"
TABLE_COMMAND = re.compile(r"^\|\s*`([a-z][a-z0-9-]*)(?=[\s`])")
HELP_COMMAND = re.compile(r"^ {4}([a-z][a-z0-9-]*)(?:\s|$)")


def drop_indented_code(text):
    """Without indented code blocks: lines indented 4 or more that follow a blank
    line or another such line (a list item's continuation follows its text)."""
    kept, in_code, previous_blank = [], False, True
    for line in text.split("\n"):
        blank = not line.strip()
        in_code = (line.startswith(("    ", "\t")) and (previous_blank or in_code)
                   and not blank) or (in_code and blank)
        kept.append("" if in_code else line)
        previous_blank = blank
    return "\n".join(kept)


def prose(text):
    """The text with code blocks and code spans blanked, where a link is text."""
    return CODE_SPAN.sub("", drop_indented_code(FENCE.sub("", text)))


def link_targets(text):
    body = prose(text)
    return INLINE_LINK.findall(body) + REF_DEF.findall(body)


def broken_links(md_path, root):
    """[(target, why)] for each local link of md_path that does not name a file
    or directory inside root."""
    bad = []
    for target in link_targets(md_path.read_text(encoding="utf-8")):
        if EXTERNAL.match(target) or target.startswith("#"):
            continue
        path = target.split("#", 1)[0].split("?", 1)[0]
        resolved = (root / path.lstrip("/")) if path.startswith("/") else (md_path.parent / path)
        resolved = resolved.resolve()
        if resolved != root and root not in resolved.parents:
            bad.append((target, "outside the repository"))
        elif not resolved.exists():
            bad.append((target, "no such file"))
    return bad


def help_commands(help_text):
    """The command names in the `commands:` section of `vdsobench --help`."""
    names, inside = [], False
    for line in help_text.splitlines():
        if line.strip() == "commands:":
            inside = True
        elif inside and line and not line.startswith(" "):
            inside = False
        elif inside:
            m = HELP_COMMAND.match(line)
            if m:
                names.append(m.group(1))
    return names


def table_commands(text):
    return [m.group(1) for m in map(TABLE_COMMAND.match, text.splitlines()) if m]


def markdown_files():
    return [README, *sorted((ROOT / "docs").glob("*.md"))]


class LinkParsingTest(unittest.TestCase):
    """The checker itself: it must see a broken link, and ignore code."""

    def test_broken_and_escaping_links_are_found(self):
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp).resolve()
            (root / "docs").mkdir()
            (root / "docs" / "here.md").write_text("x")
            page = root / "docs" / "page.md"
            page.write_text("[ok](here.md#a) [gone](missing.md) [up](../../elsewhere/x.md)\n"
                            "[web](https://example.org) [self](#top) ![img](../pic.png)\n"
                            "[ref]: nowhere.md\n")
            self.assertEqual(broken_links(page, root),
                             [("missing.md", "no such file"),
                              ("../../elsewhere/x.md", "outside the repository"),
                              ("../pic.png", "no such file"),
                              ("nowhere.md", "no such file")])

    def test_links_in_code_are_not_links(self):
        text = ("`[a](b.md)`\n\n    [c](d.md)\n\n```\n[e](f.md)\n```\n[g](h.md)\n"
                "- item\n    [i](j.md)\n")
        self.assertEqual(link_targets(text), ["h.md", "j.md"])

    def test_help_commands_parsed(self):
        text = ("usage: vdsobench [-h] COMMAND ...\n\ncommands:\n  COMMAND\n"
                "    setup         install\n    compare       paired,\n"
                "                  verdict\n    selftest-stats\n"
                "                  check\n    import        a tree\n")
        self.assertEqual(help_commands(text), ["setup", "compare", "selftest-stats", "import"])

    def test_table_commands_parsed(self):
        text = "| command | does |\n|---|---|\n| `run [--x]` | a |\n| `fleet run\\|status` | b |\n"
        self.assertEqual(table_commands(text), ["run", "fleet"])


class DocsTest(unittest.TestCase):
    def test_every_link_resolves_inside_the_tree(self):
        for md in markdown_files():
            with self.subTest(page=str(md.relative_to(ROOT))):
                self.assertEqual(broken_links(md, ROOT), [])

    def test_readme_links_every_docs_page(self):
        linked = {(README.parent / t.split("#")[0]).resolve()
                  for t in link_targets(README.read_text(encoding="utf-8"))}
        pages = sorted((ROOT / "docs").glob("*.md"))
        self.assertTrue(pages)
        self.assertEqual([p.name for p in pages if p.resolve() not in linked], [])

    def test_readme_is_short(self):
        lines = README.read_text(encoding="utf-8").splitlines()
        self.assertLess(len(lines), MAX_README_LINES)

    def test_setup_commands_on_the_first_screen(self):
        first = "\n".join(README.read_text(encoding="utf-8").splitlines()[:FIRST_SCREEN])
        for command in ("scripts/vdsobench run", "scripts/vdsobench test"):
            self.assertRegex(first, re.escape(command) + r"(\s|$)")

    def test_command_table_matches_help(self):
        r = subprocess.run(["/usr/bin/python3", str(ROOT / "scripts" / "vdsobench"), "--help"],
                           capture_output=True, text=True, stdin=subprocess.DEVNULL, cwd=ROOT)
        self.assertEqual(r.returncode, 0, r.stderr)
        commands = help_commands(r.stdout)
        self.assertGreater(len(commands), 10, r.stdout)
        table = table_commands(README.read_text(encoding="utf-8"))
        self.assertEqual(sorted(set(commands) - set(table)), [], "commands missing from the table")
        self.assertEqual(sorted(set(table) - set(commands)), [], "table rows for no command")


if __name__ == "__main__":
    unittest.main()
