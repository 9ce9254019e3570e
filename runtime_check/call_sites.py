"""Calls by name in the tree's source, for finding who runs a function or builds a class.

The analysis' summaries keep the calls the static rules need (member calls, calls through a
local); a plain call of a module-level function (`attn_backend_wrapper(runner, backend)`) or of a
class through a variable (`hybrid_cls(...)`, `cls(...)` in a classmethod factory) is not kept. The
construction path needs those, so this module reads them from the source: only files whose text
contains the name are parsed, once per run.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class SourceCall:
    module: str
    cls: str | None  # qualified class of the enclosing method, or None
    function: str  # enclosing module-level function or method (a nested def or lambda counts as it)
    line: int
    col: int
    via: str  # "name" (`f(...)`), "attr" (`x.f(...)`), "local" (`v(...)` with `v = F`), "cls" (`cls(...)`)
    path: str  # the file, parsed again for `node` only where a caller reads it

    @property
    def node(self) -> ast.Call:
        return _calls_in(self.path)[(self.line, self.col)]


_TREES: dict[str, dict[tuple[int, int], ast.Call]] = {}  # path -> its calls by place, for `node`


def _calls_in(path: str) -> dict[tuple[int, int], ast.Call]:
    hit = _TREES.get(path)
    if hit is None:
        tree = _parsed(path)
        hit = _TREES[path] = {(n.lineno, n.col_offset): n for n in ast.walk(tree) if isinstance(n, ast.Call)} \
            if tree is not None else {}
    return hit


# Where the answers come from in a process that checks one finding or one pairing: the process
# that forked it, which finds them once for all of them (reading the whole tree's source takes
# half a minute on sglang). name -> [(module, cls, function, line, col, via)].
asked: Callable[[str], list] | None = None


def calls_named(ctx, name: str) -> list[SourceCall]:
    """Every call in the tree whose callee's last name is ``name``, or a local bound to ``name``, or
    the class parameter of a classmethod of a class named ``name``."""
    memo = ctx.state(calls_named, dict)
    if name in memo:
        return memo[name]
    memo[name] = _from_positions(ctx, asked(name)) if asked is not None else _find(ctx, name)
    return memo[name]


def calls_named_in(ctx, name: str, module: str) -> list[SourceCall]:
    """`calls_named`, in one module only (read here: one file)."""
    memo = ctx.state(calls_named_in, dict)
    key = (name, module)
    if key not in memo:
        mod = ctx.index.modules.get(module)
        tree = _parsed(mod.file.path) if mod is not None else None
        out: list[SourceCall] = []
        if tree is not None:
            _Walker(module, name, out, mod.file.path).visit(tree)
        memo[key] = out
    return memo[key]


def positions(calls: list[SourceCall]) -> list[list]:
    """The calls as plain data."""
    return [[c.module, c.cls, c.function, c.line, c.col, c.via] for c in calls]


def _from_positions(ctx, found: list) -> list[SourceCall]:
    out = []
    for module, cls, function, line, col, via in found:
        mod = ctx.index.modules.get(module)
        if mod is not None and all(isinstance(x, int) for x in (line, col)):
            out.append(SourceCall(module, cls, function, line, col, via, mod.file.path))
    return out


def _parsed(path: str) -> ast.AST | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return ast.parse(fh.read())
    except (OSError, SyntaxError, ValueError):
        return None


def _find(ctx, name: str) -> list[SourceCall]:
    out: list[SourceCall] = []
    for mod in ctx.index.modules.values():
        try:
            with open(mod.file.path, encoding="utf-8", errors="replace") as fh:
                text = fh.read()
        except OSError:
            continue
        if name not in text:
            continue
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            continue
        _Walker(mod.name, name, out, mod.file.path).visit(tree)
    return out


class _Walker(ast.NodeVisitor):
    def __init__(self, module: str, name: str, out: list[SourceCall], path: str):
        self.module, self.name, self.out, self.path = module, name, out, path
        self.classes: list[str] = []
        self.function: str | None = None
        self.locals: set[str] = set()  # names bound to `name` in the current function
        self.cls_param: str | None = None  # `cls` of a classmethod of a class called `name`

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        if self.function is not None:
            return  # a class inside a function: its methods are not entry points
        self.classes.append(node.name)
        self.generic_visit(node)
        self.classes.pop()

    def _function(self, node) -> None:
        if self.function is not None:
            self.generic_visit(node)  # nested: part of the enclosing function
            return
        self.function = node.name
        self.locals = {t.id for n in ast.walk(node) if isinstance(n, ast.Assign)
                       for t in n.targets if isinstance(t, ast.Name) and _mentions(n.value, self.name)}
        is_cm = any(isinstance(d, ast.Name) and d.id == "classmethod" for d in node.decorator_list)
        self.cls_param = node.args.args[0].arg if is_cm and self.classes and self.classes[-1] == self.name \
            and node.args.args else None
        self.generic_visit(node)
        self.function, self.locals, self.cls_param = None, set(), None

    visit_FunctionDef = visit_AsyncFunctionDef = _function

    def visit_Call(self, node: ast.Call) -> None:
        if self.function is not None:
            func = node.func
            via = None
            if isinstance(func, ast.Name):
                via = "name" if func.id == self.name else ("local" if func.id in self.locals else
                                                            ("cls" if func.id == self.cls_param else None))
            elif isinstance(func, ast.Attribute) and func.attr == self.name:
                via = "attr"
            if via:
                cls = ".".join(self.classes) or None
                self.out.append(SourceCall(self.module, f"{self.module}.{cls}" if cls else None, self.function,
                                           node.lineno, node.col_offset, via, self.path))
        self.generic_visit(node)


def _mentions(value: ast.AST, name: str) -> bool:
    """`v = Name`, `v = a.Name`, `v = Name if c else Other`."""
    if isinstance(value, ast.Name):
        return value.id == name
    if isinstance(value, ast.Attribute):
        return value.attr == name
    if isinstance(value, ast.IfExp):
        return _mentions(value.body, name) or _mentions(value.orelse, name)
    return False
