"""CONTRIBUTING.md names every module of the project (issue 39: its map omitted 12)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_module_is_in_the_map():
    text = (ROOT / "CONTRIBUTING.md").read_text()
    modules = [p.relative_to(ROOT).as_posix() for pkg in ("linter", "rules", "runtime_check")
               for p in (ROOT / pkg).rglob("*.py") if p.name != "__init__.py" and "__pycache__" not in p.parts]
    assert modules and [m for m in modules if f"`{m}`" not in text] == []


def test_the_map_names_no_module_that_is_gone():
    import re
    text = (ROOT / "CONTRIBUTING.md").read_text()
    named = set(re.findall(r"`((?:linter|rules|runtime_check)/[\w/]+\.py)`", text))
    assert [m for m in named if not (ROOT / m).is_file()] == []
