"""Text from the analysed tree made safe to print.

Source lines, file names and string constants quoted in messages come from the tree, not from
us: an escape sequence in them (`\x1b[2J`) would be run by the terminal and could rewrite the
report, a bidirectional override (U+202E) would show it in another order than it is, and a file
name that is not valid UTF-8 (kept by `os.fsdecode` as lone surrogates) cannot
be written to a strict UTF-8 stream at all. Both are shown as Python writes them: `\x1b`, `\udcff`.
"""

from __future__ import annotations

import re

# C0 controls but tab, DEL, C1 controls, the surrogates that stand for undecodable bytes, and the
# bidirectional marks and overrides (a name that reads one way and runs another: Trojan Source).
_UNPRINTABLE = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\ud800-\udfff\u061c\u200e\u200f\u202a-\u202e"
                          "\u2066-\u2069]")


def _escape(match: re.Match) -> str:
    char = match.group()
    return f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}"


def printable(text: str) -> str:
    """`text` with control characters (tab excepted) and lone surrogates written as escapes."""
    return _UNPRINTABLE.sub(_escape, text) if _UNPRINTABLE.search(text) else text
