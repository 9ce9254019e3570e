"""Calls by name in the tree's source, for finding who runs a function or builds a class.

The analysis' summaries keep the calls the static rules need (member calls, calls through a
local); a plain call of a module-level function (`attn_backend_wrapper(runner, backend)`) or of a
class through a variable (`hybrid_cls(...)`, `cls(...)` in a classmethod factory) is not kept. The
construction path needs those, so this module reads them from the source: only files whose text
contains the name are parsed, once per run.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass


@dataclass(frozen=True)
class SourceCall:
    module: str
    cls: str | None  # qualified class of the enclosing method, or None
    function: str  # enclosing module-level function or method (a nested def or lambda counts as it)
    line: int
    node: ast.Call
    via: str  # "name" (`f(...)`), "attr" (`x.f(...)`), "local" (`v(...)` with `v = F`), "cls" (`cls(...)`)


def calls_named(ctx, name: str) -> list[SourceCall]:
    """Every call in the tree whose callee's last name is ``name``, or a local bound to ``name``, or
    the class parameter of a classmethod of a class named ``name``."""
    memo = ctx.state(calls_named, dict)
    if name in memo:
        return memo[name]
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
        _Walker(mod.name, name, out).visit(tree)
    memo[name] = out
    return out


class _Walker(ast.NodeVisitor):
    def __init__(self, module: str, name: str, out: list[SourceCall]):
        self.module, self.name, self.out = module, name, out
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
                                           node.lineno, node, via))
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
