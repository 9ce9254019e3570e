"""Expression refs, the resolver's type elements and annotations' type refs are read through
linter/refs.py, not by position (issue 39: 161 `x[0] == "tag"` comparisons in 24 files). A
`ref[0] == "name"` (or any other tag of the three vocabularies; or `ref[0] in (...)` naming one),
or a dispatch on a tag read into a local (`kind = ref[0]`), anywhere in the analysis, the rules or
the runtime check but refs.py and the codec fails this test."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MOVED = ("name", "attr", "call", "getattr", "sub", "union", "iter", "seq", "type", "super", "lambda",  # refs
         "cls", "fn", "method", "mod",  # type elements
         "t", "tseq", "ttype", "tunion", "tdefault")  # type refs
ALLOWED = {"linter/refs.py", "linter/perfile/codec.py"}
PATTERN = re.compile(r"\[0\]\s*(?:==|!=)\s*[\"'](" + "|".join(MOVED) + r")[\"']"
                     r"|\[0\]\s+in\s+\([^)]*[\"'](" + "|".join(MOVED) + r")[\"']"
                     # a comparison with a ref spelled out: "is this `self`?" (refs.is_self,
                     # refs.is_name_of), `== ("super",)` (refs.is_super_init)
                     r"|(?:==|!=)\s*\(\s*[\"'](" + "|".join(MOVED) + r")[\"']\s*,"
                     # a tag read into a local for a dispatch
                     r"|^\s*(?:kind|head|tag)\s*=\s*\w+\[0\]\s*$")


def _positional_reads(root: Path) -> list[str]:
    out = []
    for pkg in ("linter", "rules", "runtime_check"):
        for path in sorted((root / pkg).rglob("*.py")):
            rel = path.relative_to(root).as_posix()
            if rel in ALLOWED:
                continue
            for n, line in enumerate(path.read_text().splitlines(), 1):
                if PATTERN.search(line):
                    out.append(f"{rel}:{n}: {line.strip()}")
    return out


def test_moved_tags_are_read_through_refs_only():
    assert _positional_reads(ROOT) == []


def test_the_scan_sees_a_positional_read(tmp_path):
    (tmp_path / "linter").mkdir()
    (tmp_path / "rules").mkdir()
    (tmp_path / "linter" / "x.py").write_text('def f(ref, me):\n    return ref[0] == "attr"\n'
                                              '\n\ndef g(ref, me):\n    return ref[1] == ("name", me)\n'
                                              '\n\ndef h(t):\n    return t[0] == "cls"\n'
                                              '\n\ndef k(ref):\n    kind = ref[0]\n    return kind\n'
                                              '\n\ndef m(c):\n    return c[0] != ("super",)\n')
    assert len(_positional_reads(tmp_path)) == 5
