"""No import cycle between the project's modules, outside `if TYPE_CHECKING:` blocks (imports inside
functions count: a lazy import only hides a cycle)."""

from __future__ import annotations

import ast
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: the tomli the project depends on there
    import tomli as tomllib

from attn_lint.linter.perfile.summary import is_type_checking

ROOT = Path(__file__).resolve().parent.parent
# The import names of the project's folders: pyproject.toml's package-dir, the one table of them.
PACKAGES: dict[str, str] = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]


def modules_of_project() -> dict[str, Path]:
    out = {}
    for pkg, folder in PACKAGES.items():
        for path in sorted((ROOT / folder).glob("*.py")):
            out[pkg if path.name == "__init__.py" else f"{pkg}.{path.stem}"] = path
    return out


def imports_of(name: str, path: Path, modules: dict[str, Path], typing: bool = False) -> set[str]:
    """The project modules `name` imports anywhere, `if TYPE_CHECKING:` blocks left out (unless
    `typing`: what type checkers read counts too)."""
    tree = ast.parse(path.read_text())
    hidden = set()  # what only type checkers run: `if TYPE_CHECKING:`'s body, `if not TYPE_CHECKING:`'s else
    for block in ast.walk(tree) if not typing else ():
        if isinstance(block, ast.If):
            test = block.test
            negated = isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)
            if is_type_checking(test.operand if negated else test):
                hidden.update(id(n) for stmt in (block.orelse if negated else block.body) for n in ast.walk(stmt))
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    out: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in hidden:
            continue
        if isinstance(node, ast.ImportFrom):
            base = ".".join(package[:len(package) - node.level + 1] + [node.module or ""]).rstrip(".") \
                if node.level else node.module or ""
            out |= {m for m in (base, *(f"{base}.{a.name}" for a in node.names)) if m in modules}
        elif isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name in modules}
    return out - {name}


def cycles(modules: dict[str, Path]) -> list[list[str]]:
    graph = {m: imports_of(m, p, modules) for m, p in modules.items()}
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        order[v] = low[v] = len(order)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in order:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], order[w])
        if low[v] == order[v]:
            part = []
            while True:
                w = stack.pop()
                part.append(w)
                if w == v:
                    break
            if len(part) > 1:
                found.append(sorted(part))

    for v in sorted(graph):
        if v not in order:
            visit(v)
    return found


def test_the_project_has_no_import_cycle():
    modules = modules_of_project()
    assert len(modules) > 50
    assert cycles(modules) == []


def test_the_check_finds_a_cycle(tmp_path):
    (tmp_path / "a.py").write_text("def f():\n    from .b import g\n")
    (tmp_path / "b.py").write_text("from typing import TYPE_CHECKING\nfrom . import a\n"
                                   "if TYPE_CHECKING:\n    from .c import h\n")
    (tmp_path / "c.py").write_text("from .b import g\n")
    (tmp_path / "__init__.py").write_text("")
    modules = {"p": tmp_path / "__init__.py", "p.a": tmp_path / "a.py", "p.b": tmp_path / "b.py",
               "p.c": tmp_path / "c.py"}
    assert cycles(modules) == [["p.a", "p.b"]]  # b -> c only under TYPE_CHECKING; c -> b alone is no cycle


def test_imports_in_a_type_checking_blocks_else_run(tmp_path):
    (tmp_path / "a.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    pass\n"
                                   "else:\n    from . import b\n")
    (tmp_path / "b.py").write_text("import typing\nif not typing.TYPE_CHECKING:\n    from . import a\n")
    (tmp_path / "__init__.py").write_text("")
    modules = {"p": tmp_path / "__init__.py", "p.a": tmp_path / "a.py", "p.b": tmp_path / "b.py"}
    assert cycles(modules) == [["p.a", "p.b"]]
