"""No underscored name of one project module is used by another (issue 39): a name with a leading
underscore is its module's own business, free to change without looking elsewhere. Before, 28
uses crossed modules (`summary._EXPRESSIONS` into four, `fix._SourceCache`, six `runtime_check`
helpers, ...). Names of other packages (astroid's, the standard library's) are theirs."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("linter", "rules", "runtime_check", "attn_lint")


def _project_modules() -> set[str]:
    return {p.stem for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py")} | set(PACKAGES)


def _crossings() -> list[str]:
    own = _project_modules()
    out = []
    for pkg in PACKAGES:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            tree = ast.parse(path.read_text(), str(path))
            bound = set()  # names bound to project modules in this file
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom):
                    ours = node.level > 0 or (node.module or "").split(".")[0] in PACKAGES
                    for alias in node.names:
                        if ours and alias.name.startswith("_") and not alias.name.startswith("__"):
                            out.append(f"{path.relative_to(ROOT)}:{node.lineno}: imports {alias.name}")
                        elif ours and alias.name in own:
                            bound.add(alias.asname or alias.name)
            for node in ast.walk(tree):
                if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                        and node.value.id in bound and node.attr.startswith("_") and not node.attr.startswith("__"):
                    out.append(f"{path.relative_to(ROOT)}:{node.lineno}: uses {node.value.id}.{node.attr}")
    return out


def test_no_underscored_name_crosses_modules():
    assert _crossings() == []


def test_the_check_sees_a_crossing(tmp_path, monkeypatch):
    """The scan itself: a planted `from .summary import _x` is found."""
    fake = tmp_path / "linter"
    fake.mkdir()
    (fake / "a.py").write_text("from .summary import _hidden\nfrom . import summary\nsummary._other\n")
    (fake / "summary.py").write_text("_hidden = 1\n_other = 2\n")
    monkeypatch.setattr(__import__(__name__), "ROOT", tmp_path)
    monkeypatch.setattr(__import__(__name__), "PACKAGES", ("linter",))
    assert len(_crossings()) == 2
