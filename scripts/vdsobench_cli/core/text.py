"""Text that came from a machine or a file, made safe to print and draw.

A CPU model, a kernel release, a host name, a DMI string, anything in a
results file or a baseline is whatever the machine (or whoever wrote the file)
put there. Raw, a control character or an escape sequence acts on the
terminal, a bidi override or isolate reorders what a reader sees, a line or
paragraph separator breaks a Markdown line, and a C0 control, a lone
surrogate or U+FFFE makes an SVG not well-formed XML. printable() is the one
function that turns such a string into one that is none of these: every
character str.isprintable() refuses (controls C0 and C1, DEL, format
characters such as the bidi controls U+202A-202E and U+2066-2069 and the
zero-width ones, separators U+2028 and U+2029, surrogates, private-use and
unassigned code points) becomes a visible escape, \\x1b, \\u202e, \\U000e0001,
as Python writes them; printable text, accents and all, is unchanged; the
result is cut at a length. A backslash is left as it is, so that
printable(printable(s)) == printable(s): a string escaped when a file was
read is not escaped again when it is written and read back.

It is applied where strings enter: the loader (scripts/vdsobench_cli/
inputs.py) cleans every string of a file it reads, the fingerprint every
string it reads from this machine; and where they leave: the machine's text
in tables and captions (cut to LIMIT), every text a chart draws, every text
file a report writes, every error line.
"""

import re

# the longest string a table cell, a caption item or a label shows
LIMIT = 160
ELLIPSIS = "..."
# anything but printable ASCII: the characters to look at (a regular
# expression, so that clean text is checked at C speed); _escape keeps those
# of them str.isprintable() accepts
UNSAFE = re.compile(r"[^\x20-\x7e]")


def _escape(match):
    c = ord(match.group())
    if match.group().isprintable():
        return match.group()
    return f"\\x{c:02x}" if c <= 0xff else f"\\u{c:04x}" if c <= 0xffff else f"\\U{c:08x}"


def printable(value, limit=LIMIT):
    """value as text that prints and draws as what it is: each character
    str.isprintable() refuses replaced by its escape, then cut to limit
    characters (None: not cut), "..." marking the cut. None stays None."""
    if value is None:
        return None
    text = value if isinstance(value, str) else str(value)
    if UNSAFE.search(text):
        text = UNSAFE.sub(_escape, text)
    if limit is not None and len(text) > limit:
        text = text[:max(0, limit - len(ELLIPSIS))] + ELLIPSIS
    return text


def printable_lines(text, limit=None):
    """A document or a multi-line label: printable() line by line, the line breaks
    (only "\\n") kept."""
    return "\n".join(printable(line, limit) for line in text.split("\n"))


def cleaned(obj, limit=None):
    """obj (parsed JSON: dicts, lists, strings, numbers) with every string,
    keys too, through printable(); iterative, in place where it can be. The
    cleaned object."""
    root = [obj]
    stack = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if any(UNSAFE.search(k) or (limit is not None and len(k) > limit) for k in node):
                items = [(printable(k, limit), v) for k, v in node.items()]
                node.clear()
                node.update(items)
            pairs = node.items()
        else:
            pairs = enumerate(node)
        for key, value in list(pairs):
            if isinstance(value, str):
                node[key] = printable(value, limit)
            elif isinstance(value, (dict, list)):
                stack.append(value)
    return root[0]
