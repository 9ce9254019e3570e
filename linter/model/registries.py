"""What a module-level registry holds: the values the tree puts into it.

Serving code picks backends from tables: `BACKENDS = {"a": A}`, `BACKENDS[name] = cls` in a
`register(name, cls)` that modules call at import time, or a decorator factory,
`@register_backend("flash") def create(runner): return FlashBackend(runner)`, whose inner
function stores what it decorates. `BACKENDS[name](...)`, `BACKENDS.get(name)` then hand out one
of those values. This module reads every store into such a table, so that passed_values.py can
say what a value taken from it is: the union of what was put in.

Sound where it answers, as passed_values.py is: a table that is rebound, handed to a call or
stored elsewhere (it may be filled out of sight), a store of something other than a plain
subscript assignment, `.setdefault`, `.update` with a dict display, `.append` or `.extend` with a
display, or a stored value that cannot be followed makes the table unknown. What out-of-tree code
would register is not one of the tree's classes, as for a hook only out-of-tree code overrides:
a registration function no code of the tree calls adds nothing.
"""

from __future__ import annotations

import ast
import bisect
import re

from ..perfile.summary import EXPRESSIONS
from .callgraph import CallGraph
from .facts import ModuleFacts
from .function_text import FunctionText, calls_on_line
from .index import TreeIndex
from .resolve import Scope
from .value_uses import ValueUses

_TREES = "registries-module-tree"  # the key of a module's parsed text in ModuleFacts.derived
MAX_STORES = 400  # stores into one table; more: a cache, not a table of choices
_MUTATORS = {"setdefault", "update", "append", "extend", "add", "insert"}
_READERS = {"get", "items", "values", "keys", "__contains__", "__getitem__", "copy", "pop"}


class Entry:
    """One value put into a table: how to evaluate it. `ref` in `scope` (a plain value), or the
    definitions decorated by a factory (`decorated`, already values)."""

    __slots__ = ("ref", "scope", "values")

    def __init__(self, ref=None, scope=None, values=None):
        self.ref, self.scope, self.values = ref, scope, values


class Registries:
    def __init__(self, index: TreeIndex, facts: dict[str, ModuleFacts], value_uses: ValueUses,
                 text: FunctionText, calls: CallGraph):
        self.index = index
        self.facts = facts
        self.value_uses = value_uses
        self.text = text
        self.calls = calls
        self._memo: dict[str, list[Entry] | None] = {}
        self._decorated_memo: dict[str, dict] = {}

    # --- the question ----------------------------------------------------------------------------
    def entries(self, qual: str) -> list[Entry] | None:
        """What the module-level name `qual` (`pkg.mod.TABLE`) is filled with; None when unknown."""
        if qual not in self._memo:
            self._memo[qual] = None  # a table filled from itself is not followed
            self._memo[qual] = self._entries(qual)
        return self._memo[qual]

    def _entries(self, qual: str) -> list[Entry] | None:
        module, _, name = qual.rpartition(".")
        tree = self.module_tree(module)
        if tree is None:
            return None
        out: list[Entry] = []
        top = Scope(module, None, self.index.modules[module].summary.toplevel)
        defined = False
        for stmt in _top_bindings(tree, name):
            if stmt.value is None:
                continue  # `TABLE: dict[str, type]`, a declaration: no value
            if defined:
                return None  # bound twice: which one holds is a matter of order
            defined = True
            got = _display(stmt.value, top)
            if got is None:
                return None
            out.extend(got)
        if not defined:
            return None
        for mod in self._users(module, name):
            got = self._stores(mod, module, name)
            if got is None:
                return None
            out.extend(got)
            if len(out) > MAX_STORES:
                return None
        return out

    def qualify(self, module: str, name: str, depth: int = 0) -> str | None:
        """`pkg.mod.NAME` for a module-level name bound by assignment in `module` or imported
        into it from where it is (an empty table, `{}`, is no global the summaries keep)."""
        sym = self.index.resolve_name(module, name)
        if sym is not None:
            return sym.qual if sym.kind == "global" else None
        if depth > 4:
            return None
        # Bound at module level: a line starting with the name (read before parsing anything).
        lines = self.text.source_lines(self.index.modules[module].file.path) or ()
        head = name.encode()
        if any(line.startswith(head) and line[len(head):len(head) + 1] in (b" ", b"=", b":") for line in lines):
            tree = self.module_tree(module)
            if tree is not None and _top_bindings(tree, name):
                return f"{module}.{name}"
        for imp in reversed(self.index.modules[module].summary.imports):
            if imp.local == name and imp.name is not None:
                target = self.index.find_module(self.index._absolute(module, imp.module, imp.level), module)
                if target and target != module:
                    return self.qualify(target, imp.name, depth + 1)
        return None

    # --- where it is filled ----------------------------------------------------------------------
    def _users(self, module: str, name: str) -> list[str]:
        uses = self.value_uses
        found = {module} | {m for m, _ in uses.importers(name)} | \
            {m for m, _ in uses.importers(module.rpartition(".")[2])}
        return sorted(m for m in found if m in self.index.modules)

    def _refers(self, mod: str, node: ast.expr, module: str, name: str, local: set[str]) -> bool:
        """Whether `node` is the table: its name here (not shadowed) or `its_module.NAME`."""
        if isinstance(node, ast.Name):
            if node.id != name or node.id in local:
                return False
            if mod == module:
                return True
            return self.qualify(mod, name) == f"{module}.{name}"
        if isinstance(node, ast.Attribute) and node.attr == name and isinstance(node.value, ast.Name):
            sym = self.index.resolve_name(mod, node.value.id)
            return sym is not None and sym.kind == "module" and sym.qual == module
        return False

    def _stores(self, mod: str, module: str, name: str) -> list[Entry] | None:
        lines = self.text.source_lines(self.index.modules[mod].file.path) or ()
        word = re.compile(rb"(?<![\w])" + re.escape(name.encode()) + rb"(?![\w])")
        mentions = [n for n, line in enumerate(lines, 1) if name.encode() in line and word.search(line)]
        if not mentions:
            return [] if mod != module else None  # (an importer of its module that never names it: most are)
        tree = self.module_tree(mod)
        if tree is None:
            return None
        out: list[Entry] = []
        shadowing: dict[int, set[str]] = {}  # id(def) -> the names it binds, for the defs that mention it
        for node, chain in _walk(tree, mentions):
            if (node.id if isinstance(node, ast.Name) else node.attr) != name:
                continue
            local = set()
            if chain:
                key = id(chain[-1])
                if key not in shadowing:
                    shadowing[key] = _locals(chain[-1])
                local = shadowing[key]
            if not self._refers(mod, node, module, name, local):
                continue
            parent = getattr(node, "_al_parent", None)
            if isinstance(parent, ast.Subscript) and parent.value is node:
                if isinstance(parent.ctx, ast.Store):
                    value = getattr(parent, "_al_assigned", None)
                    if value is None:
                        return None  # `TABLE[k] += ...`, unpacking into it
                    got = self._value(mod, value, chain)
                    if got is None:
                        return None
                    out.extend(got)
                elif isinstance(parent.ctx, ast.Del):
                    continue
                continue
            if isinstance(parent, ast.Attribute) and parent.value is node:
                call = getattr(parent, "_al_parent", None)
                if parent.attr in _READERS and isinstance(call, ast.Call) and call.func is parent:
                    continue
                if parent.attr in _MUTATORS and isinstance(call, ast.Call) and call.func is parent:
                    got = self._mutation(mod, parent.attr, call, chain)
                    if got is None:
                        return None
                    out.extend(got)
                    continue
                return None  # another attribute of it: handed on, or mutated some other way
            if isinstance(parent, ast.Compare) and node is not parent.left:
                continue  # `name in TABLE`
            if isinstance(parent, (ast.For, ast.comprehension)) and parent.iter is node:
                continue
            if isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name) and \
                    parent.func.id in ("len", "sorted", "list", "iter", "bool") and node in parent.args:
                continue
            if isinstance(parent, ast.Global) or isinstance(node.ctx, ast.Store) and mod == module and not chain:
                continue  # its definition (read above)
            return None  # handed to a call, stored elsewhere, returned, rebound in a function
        return out

    def _mutation(self, mod: str, method: str, call: ast.Call, chain: list) -> list[Entry] | None:
        args = call.args
        if method == "setdefault" and len(args) == 2:
            return self._value(mod, args[1], chain)
        if method in ("append", "add") and len(args) == 1:
            return self._value(mod, args[0], chain)
        if method == "insert" and len(args) == 2:
            return self._value(mod, args[1], chain)
        if method in ("update", "extend") and len(args) == 1 and not call.keywords:
            return _display(args[0], self._scope(mod, chain))
        return None

    def _value(self, mod: str, value: ast.expr, chain: list) -> list[Entry] | None:
        """What one stored value is: a parameter of a registration function or of a decorator's
        inner function reads from the calls or decorations that give it; anything else is read
        in its scope."""
        if isinstance(value, ast.Name) and chain and value.id in _params(chain[-1]) \
                and value.id not in _rebound(chain[-1], value.id):
            return self._given(mod, value.id, chain)
        ref = EXPRESSIONS.ref(value)
        if ref is None:
            return None
        return [Entry(ref, self._scope(mod, chain))]

    def _scope(self, mod: str, chain: list) -> Scope:
        summary = self.index.modules[mod].summary
        if not chain:
            return Scope(mod, None, summary.toplevel)
        outer = chain[0]
        if isinstance(outer, ast.ClassDef) and len(chain) >= 2:
            info = summary.classes.get(outer.name)
            fn = info.methods.get(chain[1].name) if info else None
            if fn is not None and len(chain) == 2:
                return self.text.full_scope(Scope(mod, f"{mod}.{outer.name}", fn))
        fn = summary.functions.get(getattr(outer, "name", ""))
        if fn is not None and len(chain) == 1:
            return self.text.full_scope(Scope(mod, None, fn))
        return Scope(mod, None, None)  # a nested function: nothing of it is summarised

    def _given(self, mod: str, param: str, chain: list) -> list[Entry] | None:
        inner = chain[-1]
        position = _params(inner).index(param)
        if len(chain) == 1 and isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef)):
            # A registration function: what each call of it (module level included) passes, and
            # what it decorates where it is used as a decorator.
            return self._registrations(f"{mod}.{inner.name}", param, position)
        if len(chain) == 2 and all(isinstance(c, (ast.FunctionDef, ast.AsyncFunctionDef)) for c in chain) \
                and position == 0 and _returns_name(chain[0], inner.name):
            return [Entry(values=self._decorated(f"{mod}.{chain[0].name}"))]
        return None

    def _registrations(self, qual: str, param: str, position: int) -> list[Entry] | None:
        """What each call of a registration function passes (module level included; evaluated by
        the asker), and what it decorates where it is a decorator."""
        module, _, name = qual.rpartition(".")
        out: list[Entry] = []
        if position == 0:
            out.append(Entry(values=self._decorated(qual)))
        for cscope, base, line in self.calls.calls_by_name(name, module):
            sym = self.index.resolve_name(cscope.module, base or name)
            if sym is None or (sym.qual != qual if base is None else sym.kind != "module" or sym.qual != module):
                continue
            nodes = self._calls_at(cscope, line, base, name)
            if not nodes:
                return None
            scope = cscope if cscope.fn is not None and cscope.fn.name == "<module>" else self.text.full_scope(cscope)
            for call in nodes:
                if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
                    return None
                given = next((k.value for k in call.keywords if k.arg == param), None)
                if given is None and position < len(call.args):
                    given = call.args[position]
                ref = EXPRESSIONS.ref(given) if given is not None else None
                if ref is None:
                    return None  # its default (not read here), or an expression no ref says
                out.append(Entry(ref, scope))
        return out

    def _calls_at(self, scope: Scope, line: int, base: str | None, name: str) -> list[ast.Call]:
        if scope.fn is not None and scope.fn.name != "<module>":
            return self.text.calls_at(scope, line, base, name)
        tree = self.module_tree(scope.module)
        return calls_on_line(tree, line, base, name) if tree is not None else []

    def _decorated(self, qual: str) -> dict:
        """The functions and classes of the tree decorated with `qual` (`@qual` or `@qual(...)`:
        the summary keeps the decorator's name only), as values: ("fn", function) or ("cls", class)."""
        if qual in self._decorated_memo:
            return self._decorated_memo[qual]
        short = qual.rpartition(".")[2]
        out: dict = {}
        self._decorated_memo[qual] = out
        for m, mod in self.index.modules.items():
            summary = mod.summary
            for kind, table in (("fn", summary.functions), ("cls", summary.classes)):
                for name, info in table.items():
                    for dec in info.decorators:
                        if dec.rpartition(".")[2] != short:
                            continue
                        sym = self.index.resolve_name(m, dec)
                        if getattr(sym, "qual", None) == qual:
                            out[(kind, f"{m}.{name}")] = True
        return out

    # --- text ------------------------------------------------------------------------------------
    def module_tree(self, module: str) -> ast.Module | None:
        """The module parsed again (kept with its facts); _walk tells each node it visits its parent."""
        derived = self.facts[module].derived
        if _TREES in derived:
            return derived[_TREES]
        derived[_TREES] = None
        mod = self.index.modules.get(module)
        if mod is None:
            return None
        lines = self.text.source_lines(mod.file.path)
        if not lines:
            return None
        try:
            tree = ast.parse(b"".join(lines).decode("utf-8", "replace"))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
        derived[_TREES] = tree
        return tree


def _top_bindings(tree: ast.Module, name: str) -> list:
    """The module-level statements assigning `name` (`NAME = ...`, `NAME: T = ...`, `NAME: T`)."""
    out = []
    for stmt in tree.body:
        targets = stmt.targets if isinstance(stmt, ast.Assign) else \
            [stmt.target] if isinstance(stmt, ast.AnnAssign) else []
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            out.append(stmt)
    return out


def _display(node: ast.expr | None, scope: Scope) -> list[Entry] | None:
    """The values of a dict, list, tuple or set display (an empty `dict()` too); None otherwise."""
    if isinstance(node, ast.Dict):
        if any(k is None for k in node.keys):
            return None  # `{**other}`
        items = node.values
    elif isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        items = node.elts
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.args and not node.keywords \
            and node.func.id in ("dict", "list", "set", "OrderedDict", "defaultdict"):
        items = []
    else:
        return None
    out = []
    for v in items:
        ref = EXPRESSIONS.ref(v)
        if ref is None:
            return None
        out.append(Entry(ref, scope))
    return out


def _walk(tree: ast.Module, lines: list[int]):
    """(node, chain of enclosing defs and classes) for every Name and Attribute of the module on
    one of `lines` (sorted), each node told its parent (`_al_parent`) and a subscript assigned to
    the value it is given (`_al_assigned`); subtrees spanning none of the lines are not entered."""
    stack = [(tree, [])]
    while stack:
        node, chain = stack.pop()
        if isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Subscript):
                    t._al_assigned = node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Subscript):
            node.target._al_assigned = node.value
        for child in ast.iter_child_nodes(node):
            first = getattr(child, "lineno", None)
            if first is not None:
                i = bisect.bisect_left(lines, first)
                if i == len(lines) or lines[i] > (child.end_lineno or first):
                    continue
            child._al_parent = node
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                stack.append((child, chain + [child]))
            else:
                if isinstance(child, (ast.Name, ast.Attribute)):
                    yield child, chain
                stack.append((child, chain))


def _params(fn) -> list[str]:
    if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        a = fn.args
        return [p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)]
    return []


def _locals(fn) -> set[str]:
    """Names a function binds (parameters, assignments): they shadow the table's name."""
    out = set(_params(fn))
    if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        for n in ast.walk(fn):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                out.add(n.id)
            elif isinstance(n, ast.Global):
                out -= set(n.names)
    return out


def _rebound(fn, name: str) -> set[str]:
    return {name for n in ast.walk(fn) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store)}


def _returns_name(fn, name: str) -> bool:
    return any(isinstance(n, ast.Return) and isinstance(n.value, ast.Name) and n.value.id == name
               for n in ast.walk(fn))
