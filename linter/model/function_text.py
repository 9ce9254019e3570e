"""A function's own text, read again where its summary keeps too little.

The summaries keep what every rule needs of a function (its calls, locals, constructions); a
question about one argument of one call, a local the summary pruned, or a body that is a single
`return` reads the function's lines again and parses only them. Each function is read once per
run, and kept with its module's facts, so a resident server reads it again only after an edit.
Nothing here runs the code: the text is parsed, never imported.
"""

from __future__ import annotations

import ast
from typing import NamedTuple

from ..files.source_lines import SourceLines
from ..perfile.summary import FunctionInfo, ModuleWalk, summarise_function
from .facts import ModuleFacts
from .index import TreeIndex
from .resolve import Scope

_SOURCES = "function-text-source"  # the key of re-read functions in ModuleFacts.derived
_CONSTANTS = "function-text-constants"  # a module's top-level names bound once to a string
_WALKS = "function-text-walk"  # and the walks that summarised them (their bindings' and constructions' nodes)


class Constant(NamedTuple):
    """What a function answers when its body is only `return <literal>`."""

    value: object


class Reread(NamedTuple):
    info: FunctionInfo  # summarised again, every local kept
    node: ast.FunctionDef | ast.AsyncFunctionDef


class FunctionText:
    def __init__(self, index: TreeIndex, facts: dict[str, ModuleFacts]):
        self.index = index
        self.facts = facts
        self._sources = SourceLines()

    def source_lines(self, path: str):
        return self._sources.of(path)

    def path(self, module: str) -> str:
        mod = self.index.modules.get(module)
        return mod.file.display if mod else module

    def full_scope(self, scope: Scope) -> Scope:
        """The caller's scope with every local its summary pruned (a local handed on only to a
        method call is not kept there), re-read from its source."""
        got = self.source(scope)
        return Scope(scope.module, scope.cls, got.info) if got else scope

    def source(self, scope: Scope) -> Reread | None:
        """The function summarised again with every local, and its parsed node, from its own text;
        kept with the module's facts, so a resident server parses it again only after an edit."""
        fn = scope.fn
        store = self.facts[scope.module].derived.setdefault(_SOURCES, {})
        key = (scope.module, fn.line, fn.name)
        if key in store:
            return store[key]
        store[key] = None
        mod = self.index.modules.get(scope.module)
        if mod is None or fn.name == "<module>":
            return None
        path = mod.file.path
        lines = self._sources.of(path)
        if not lines or fn.end_line > len(lines):
            return None
        text = b"".join(lines[fn.line - 1:fn.end_line]).decode("utf-8", "replace")
        # An indented method parses inside a block. Blank lines in front put every node on its
        # line in the file, without a second walk over the nodes to move them there.
        head = "if True:\n" if text[:1] in " \t" else ""
        blank = max(fn.line - (2 if head else 1), 0)
        try:
            tree = ast.parse("\n" * blank + head + text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
        node = tree.body[0] if tree.body else None
        if head and type(node) is ast.If:
            node = node.body[0] if node.body else None
        if not (type(node) in (ast.FunctionDef, ast.AsyncFunctionDef) and node.name == fn.name):
            node = next((n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                         and n.name == fn.name), None)
        if node is None:
            return None
        if node.lineno != fn.line:  # an indented `def` on the file's first line: no room for the `if True:`
            ast.increment_lineno(node, fn.line - node.lineno)
        walked: list = []
        info = summarise_function(node, scope.cls is not None, [], [], ModuleWalk(), walked)
        info.decorators = fn.decorators  # (above the `def` line: not in the text read)
        self.facts[scope.module].derived.setdefault(_WALKS, {})[key] = walked[0]
        store[key] = Reread(info, node)
        return store[key]

    def function_node(self, scope: Scope) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        """The function `scope` is in, parsed from its own text (kept like call_node's)."""
        got = self.source(scope)
        return got.node if got else None

    def constant_return(self, scope: Scope) -> Constant | None:
        """Constant(value) when the function's body (after a docstring) is only `return <literal>`
        (a bare `return`: None); None otherwise. Read from its text, once per function."""
        node = self.function_node(scope)
        if node is None:
            return None
        body = node.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            body = body[1:]
        if len(body) != 1 or not isinstance(body[0], ast.Return):
            return None
        value = body[0].value
        if value is None:
            return Constant(None)
        if not isinstance(value, ast.Constant) or value.value is Ellipsis:
            return None
        return Constant(value.value)

    def module_constant(self, module: str, name: str) -> str | None:
        """The string a module-level name is bound to, where its module binds it once, at top
        level, to a string constant (read from the module's text, once per module)."""
        facts = self.facts.get(module)
        if facts is None:
            return None
        store = facts.derived.get(_CONSTANTS)
        if store is None:
            store = facts.derived[_CONSTANTS] = self._constants(module)
        return store.get(name)

    def _constants(self, module: str) -> dict[str, str]:
        mod = self.index.modules.get(module)
        lines = self._sources.of(mod.file.path) if mod is not None else None
        if not lines:
            return {}
        try:
            tree = ast.parse(b"".join(lines).decode("utf-8", "replace"))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return {}
        bound: dict[str, list] = {}
        for node in tree.body:
            targets = node.targets if isinstance(node, ast.Assign) else \
                [node.target] if isinstance(node, ast.AnnAssign) and node.value is not None else []
            for t in targets:
                if isinstance(t, ast.Name):
                    bound.setdefault(t.id, []).append(node.value)
        return {k: v[0].value for k, v in bound.items()
                if len(v) == 1 and isinstance(v[0], ast.Constant) and isinstance(v[0].value, str)}

    def call_node(self, scope: Scope, line: int, col: int) -> ast.Call | None:
        """The call at (line, col) in the function `scope` is in, parsed from that function's text
        (once per function: param_callers.py reads callers' arguments this way too)."""
        got = self.source(scope)
        if got is None:
            return None
        for n in ast.walk(got.node):
            if isinstance(n, ast.Call) and n.lineno == line and n.col_offset == col:
                return n
        return None  # `if True:` keeps columns as they were: a miss means the file changed

    def calls_at(self, scope: Scope, line: int, base: str | None, name: str) -> list[ast.Call]:
        """The calls of `name` (or `base.name`) on a line of the function `scope` is in."""
        got = self.source(scope)
        return calls_on_line(got.node, line, base, name) if got is not None else []

    def walker(self, scope: Scope):
        """The walk that summarised the function `source` read again; None without one."""
        if self.source(scope) is None:
            return None
        return self.facts[scope.module].derived[_WALKS][(scope.module, scope.fn.line, scope.fn.name)]


def calls_on_line(node: ast.AST, line: int, base: str | None, name: str) -> list[ast.Call]:
    """The calls of `name` (or `base.name`) on a line of `node`."""
    out = []
    for n in ast.walk(node):
        if isinstance(n, ast.Call) and n.lineno == line:
            f = n.func
            if (base is None and isinstance(f, ast.Name) and f.id == name) or \
                    (base is not None and isinstance(f, ast.Attribute) and f.attr == name
                     and isinstance(f.value, ast.Name) and f.value.id == base):
                out.append(n)
    return out
