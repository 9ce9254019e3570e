"""Text from the analysed tree made safe to print.

Source lines, file names and string constants quoted in messages come from the tree, not from
us: an escape sequence in them (`\x1b[2J`) would be run by the terminal and could rewrite the
report, and a file name that is not valid UTF-8 (kept by `os.fsdecode` as lone surrogates) cannot
be written to a strict UTF-8 stream at all. Both are shown as Python writes them: `\x1b`, `\udcff`.
"""

from __future__ import annotations

import re

# C0 controls but tab, DEL, C1 controls, and the surrogates that stand for undecodable bytes.
_UNPRINTABLE = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\ud800-\udfff]")


def _escape(match: re.Match) -> str:
    char = match.group()
    return f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}"


def printable(text: str) -> str:
    """`text` with control characters (tab excepted) and lone surrogates written as escapes."""
    return _UNPRINTABLE.sub(_escape, text) if _UNPRINTABLE.search(text) else text
