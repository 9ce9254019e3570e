"""What a factory method builds for one call: the classes its overrides construct in their returns.

An object that does a job for another (a quantisation method for a layer, a scheme for a config)
is often made by a factory that a family of configurations overrides, each returning the class
that serves the layer it is asked about:

    class AWQConfig(QuantConfig):
        def get_quant_method(self, layer, prefix):
            if isinstance(layer, LinearBase):
                return AWQLinearMethod(self)
            elif isinstance(layer, FusedMoE):
                return AWQMoEMethod(self)
            return None

    class FusedMoE:
        def __init__(self, quant_config: QuantConfig, prefix=""):
            self.quant_method = quant_config.get_quant_method(self, prefix)

The objects held by `FusedMoE.quant_method` form a family by use: each override names the class it
builds, and the test on the argument says which layer gets which. A return under
`isinstance(layer, LinearBase)` is never reached by a call that passes a `FusedMoE` (no class of
that lineage is a `LinearBase`). What is left is a lower bound on what the attribute holds: classes
the code builds there, each with the return that builds it; it never stands for "any subclass".

Only what the text shows is claimed: a return of a call of an in-tree class by name (or of
another factory's, followed a level or two down); returns of anything else (a local, `None`) add
nothing. A return counts only where a test on its way holds for every class the asker can be
(`isinstance(layer, FusedMoE)` for a `FusedMoE`): the factory names that class for the asker's
kind. A return reached only through tests that say nothing of the asker (`if skipped(prefix):
return Unquantized()`, taken for whatever layer a checkpoint lists) is not claimed. An override's
class must itself be built or handed out by the tree (a configuration nothing makes serves no
layer).
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..findings import Evidence
from ..refs import is_attr, is_call, is_name
from .resolve import Scope

if TYPE_CHECKING:
    from ..perfile.summary import FunctionInfo
    from .context import Context

MAX_OVERRIDES = 200  # overrides of one factory read for one call: a family of configurations, not a universe
MAX_FACTORY_DEPTH = 2  # factories a return hands on to (`return Method.pick(cfg)`), followed this deep


@dataclass(frozen=True)
class Built:
    """A class a factory call builds, and the return that builds it."""

    cls: str
    evidence: Evidence


def held_from_factories(ctx: Context, owner: str, attr: str,
                        is_built: Callable[[Context, str], object]) -> list[Built]:
    """What `self.<attr>` of `owner` is built with by the factory calls assigned to it
    (`self.attr = other.make(self, ...)`) in the classes of its MRO. Other assignments add
    nothing: this is a lower bound of what the attribute holds, never its every possibility.
    Only the overrides of factory owners `is_built` places (not None) count: a configuration
    nothing builds serves no layer."""
    index = ctx.index
    out: dict[str, Built] = {}
    for c in index.mro(owner):
        if c not in index.classes:
            continue
        entry = index.classes[c]
        for method, (value, _ann, _line) in index.assignments(c).get(attr, ()):
            if value is None or not is_call(value) or not value[1] or not is_attr(value[1]) \
                    or method.kind != "method" or not method.params:
                continue
            scope = Scope(entry.module, c, method)
            for b in _built_by_call(ctx, scope, value, owner, is_built):
                out.setdefault(b.cls, b)
    return [out[k] for k in sorted(out)]


def _built_by_call(ctx: Context, scope: Scope, value: tuple, owner: str,
                   is_built: Callable[[Context, str], object]) -> list[Built]:
    """The classes `recv.make(args)` (at `value`, in `scope`) builds through the overrides of
    `make` on every class the receiver's static type admits."""
    index = ctx.index
    _, func, line, col = value[:4]
    recv, name = func[1], func[2]
    if recv is None or (is_name(recv) and recv[1] == scope.fn.params[0].name):
        return []  # a method of its own: not another object's factory
    res = ctx.resolver.resolve(recv, scope)
    statics = sorted(t for t in res.instances() if t in index.classes)
    if not statics:
        return []
    node = ctx.tree.text.call_node(scope, line, col)
    if node is None or any(isinstance(a, ast.Starred) for a in node.args) \
            or any(k.arg is None for k in node.keywords):
        return []
    me = scope.fn.params[0].name
    # What the call passes as an instance of a known lineage: `self` is the owner or a subclass.
    lineage = {owner} | set(index.descendants(owner))
    passes_self = [i for i, a in enumerate(node.args) if isinstance(a, ast.Name) and a.id == me]
    passes_self_kw = {k.arg for k in node.keywords if isinstance(k.value, ast.Name) and k.value.id == me}
    owners: dict[str, FunctionInfo] = {}
    for t in statics:
        for k in sorted({t} | set(index.descendants(t))):
            info = index.classes[k].info
            fn = info.methods.get(name)
            if fn is not None and fn.kind == "method" and k not in owners:
                owners[k] = fn
    if len(owners) > MAX_OVERRIDES:
        return []
    out: list[Built] = []
    for k, fn in sorted(owners.items()):
        if is_built(ctx, k) is None:
            continue
        params = [p.name for p in fn.params[1:]]
        given = frozenset({params[i] for i in passes_self if i < len(params)} | (passes_self_kw & set(params)))
        kscope = Scope(index.classes[k].module, k, fn)
        label = f"{index.classes[k].info.name}.{name}"
        for cls, via, path, at, kind in _returned(ctx, kscope, given, lineage, 0):
            if not kind:
                continue  # built on a test that says nothing of the asker (`if skipped(prefix):`): not its kind's
            out.append(Built(cls, Evidence(path, at, f"`{label}()` returns `{cls.rsplit('.', 1)[-1]}`{via} for "
                                                     f"the object `{recv_text(recv)}` is asked about at line {line}, "
                                                     f"under a test its kind passes")))
    return out


def recv_text(ref: tuple) -> str:
    if is_name(ref):
        return ref[1]
    if is_attr(ref) and ref[1] is not None:
        return f"{recv_text(ref[1])}.{ref[2]}"
    return "..."


class _Names:
    """Names as the function's text binds them: its own imports (`from pkg.layer import FusedMoE`
    inside the body, the usual way around an import cycle) before the module's; and its locals
    bound once, at the top of its body, by a plain `name = expr`."""

    def __init__(self, ctx: Context, scope: Scope, node: ast.AST):
        self.ctx, self.scope = ctx, scope
        self.local: dict[str, str] = {}  # local name -> dotted target
        stores: dict[str, int] = {}
        package = scope.module.split(".")
        for n in ast.walk(node):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                stores[n.id] = stores.get(n.id, 0) + 1
            elif isinstance(n, ast.ImportFrom):
                base = n.module or ""
                if n.level:
                    base = ".".join([*package[:len(package) - n.level], *([base] if base else [])])
                for a in n.names:
                    self.local[a.asname or a.name] = f"{base}.{a.name}" if base else a.name
        self.bound_once = {n.targets[0].id: n.value for n in getattr(node, "body", [])
                           if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name)
                           and stores.get(n.targets[0].id) == 1}

    def symbol(self, dotted: str):
        index = self.ctx.index
        head, _, rest = dotted.partition(".")
        target = self.local.get(head)
        if target is None:
            return index.resolve_name(self.scope.module, dotted)
        module, _, name = target.rpartition(".")
        found = index.find_module(module, self.scope.module) if module else None
        return index.resolve_name(found, f"{name}.{rest}" if rest else name) if found else None

    def cls(self, dotted: str | None) -> str | None:
        sym = self.symbol(dotted) if dotted else None
        return sym.qual if sym is not None and sym.kind == "class" and sym.qual in self.ctx.index.classes else None


def _returned(ctx: Context, scope: Scope, given: frozenset, lineage: set[str],
              depth: int) -> list[tuple[str, str, str, int, bool]]:
    """The in-tree classes the function `scope` is in constructs in its returns that a call
    passing the asking object as the parameters `given` can reach: (class, how, path, line,
    whether a test on the way names the asker's kind)."""
    got = ctx.tree.text.source(scope)
    if got is None:
        return []
    memo = ctx.state(_Names, dict)
    key = (scope.module, scope.fn.line, scope.fn.name)
    names = memo.get(key)
    if names is None:
        names = memo[key] = _Names(ctx, scope, got.node)
    path = ctx.tree.text.path(scope.module)
    out = []
    for ret, facts in _returns_with_facts(got.node):
        facts = [(_substituted(names, test), truth) for test, truth in facts]
        if any(_fails(names, test, truth, given, lineage) for test, truth in facts):
            continue
        # The return names the asker's kind where a test on its way holds for every class it can be.
        kind = any(_names_kind(names, test, truth, given, lineage) for test, truth in facts)
        for cls, via, inner_kind in _constructed(ctx, scope, names, ret.value, given, lineage, depth):
            out.append((cls, via, path, ret.lineno, kind or inner_kind))
    return out


def _returns_with_facts(node: ast.AST):
    """Every `return <value>` of the function, with the tests that must hold to reach it, each as
    (test, the truth it must have): the test of an `if` whose body holds it (True), of an `if`
    whose `else` holds it (False), and of an earlier `if` whose body always leaves the function
    (False: `if not isinstance(layer, X): return ...` before it)."""

    def leaves(body: list) -> bool:
        return bool(body) and isinstance(body[-1], (ast.Return, ast.Raise))

    def walk(body: list, facts: tuple):
        for stmt in body:
            if isinstance(stmt, ast.Return):
                if stmt.value is not None:
                    yield stmt, facts
            elif isinstance(stmt, ast.If):
                yield from walk(stmt.body, (*facts, (stmt.test, True)))
                yield from walk(stmt.orelse, (*facts, (stmt.test, False)))
                if leaves(stmt.body) and not leaves(stmt.orelse):
                    facts = (*facts, (stmt.test, False))
                elif leaves(stmt.orelse) and not leaves(stmt.body):
                    facts = (*facts, (stmt.test, True))
            elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            else:
                for field in ("body", "orelse", "finalbody"):
                    inner = getattr(stmt, field, None)
                    if isinstance(inner, list):
                        yield from walk(inner, facts)
                for h in getattr(stmt, "handlers", ()):
                    yield from walk(h.body, facts)

    yield from walk(getattr(node, "body", []), ())


def _constructed(ctx: Context, scope: Scope, names: _Names, value: ast.expr | None, given: frozenset,
                 lineage: set[str], depth: int) -> list[tuple[str, str, bool]]:
    """The in-tree classes a returned `Cls(...)` (or `module.Cls(...)`) builds. A returned call of
    another factory (a class's static or class method, a module-level function, the base's own
    `super().make(layer, prefix)`) gives what its returns build for what this call hands it, a
    level or two down. Each with how it was reached (for the evidence)."""
    if not isinstance(value, ast.Call):
        return []
    target = _super_method(ctx, scope, value)
    if target is None:
        dotted = _dotted(value.func)
        if dotted is None or dotted.split(".")[0] in scope.fn.locals:
            return []
        sym = names.symbol(dotted)
        if sym is not None and sym.kind == "class" and sym.qual in ctx.index.classes:
            return [(sym.qual, "", False)]
        target = _function(ctx, names, dotted, sym)
    if target is None or depth >= MAX_FACTORY_DEPTH:
        return []
    tscope, label, implicit = target
    params = [p.name for p in tscope.fn.params[implicit:]]
    passed = frozenset(params[i] for i, a in enumerate(value.args)
                       if isinstance(a, ast.Name) and a.id in given and i < len(params)) | frozenset(
        k.arg for k in value.keywords if k.arg in params and isinstance(k.value, ast.Name) and k.value.id in given)
    return [(cls, via or f" (through `{label}()`)", kind)
            for cls, via, _, _, kind in _returned(ctx, tscope, passed, lineage, depth + 1)]


def _super_method(ctx: Context, scope: Scope, call: ast.Call) -> tuple[Scope, str, int] | None:
    """`super().make(...)` in a method: the base's `make`, in the first class after this one in the
    MRO that defines it."""
    func = call.func
    if scope.cls is None or not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Call)
                                 and isinstance(func.value.func, ast.Name) and func.value.func.id == "super"):
        return None
    index = ctx.index
    for c in index.mro(scope.cls)[1:]:
        if c in index.classes and func.attr in index.classes[c].info.methods:
            fn = index.classes[c].info.methods[func.attr]
            return Scope(index.classes[c].module, c, fn), f"{index.classes[c].info.name}.{func.attr}", 1
    return None


def _function(ctx: Context, names: _Names, dotted: str, sym) -> tuple[Scope, str, int] | None:
    """A module-level function (`make(...)`) or a class's static or class method (`Cls.make(...)`)
    that `dotted` names: the scope its text is read in, its label, and how many leading
    parameters the call does not pass (a class method's `cls`)."""
    index = ctx.index
    if sym is not None and sym.kind == "function":
        module, _, name = sym.qual.rpartition(".")
        mod = index.modules.get(module)
        fn = mod.summary.functions.get(name) if mod is not None else None
        return (Scope(module, None, fn), name, 0) if fn is not None else None
    head, _, name = dotted.rpartition(".")
    owner = names.symbol(head) if head else None
    if owner is None or owner.kind != "class" or owner.qual not in index.classes:
        return None
    found = index.method(owner.qual, name)
    if found is None or found.fn.kind not in ("staticmethod", "classmethod"):
        return None
    label = f"{index.classes[owner.qual].info.name}.{name}"
    return (Scope(index.classes[found.owner].module, found.owner, found.fn), label,
            1 if found.fn.kind == "classmethod" else 0)


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


def _substituted(names: _Names, test: ast.expr, depth: int = 0) -> ast.expr:
    """A test that is a local bound once to an expression (`lm_head = isinstance(layer, Head)
    and cfg.quantized`, then `if isinstance(layer, Linear) or lm_head:`) read as that expression."""
    if depth > 4:
        return test
    if isinstance(test, ast.Name):
        bound = names.bound_once.get(test.id)
        return _substituted(names, bound, depth + 1) if bound is not None else test
    if isinstance(test, ast.BoolOp):
        return ast.BoolOp(test.op, [_substituted(names, v, depth + 1) for v in test.values])
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return ast.UnaryOp(test.op, _substituted(names, test.operand, depth + 1))
    return test


def _names_kind(names: _Names, test: ast.expr, truth: bool, given: frozenset, lineage: set[str]) -> bool:
    """Whether the fact that `test` has the truth `truth` says the asker is of a kind its every
    class is: `isinstance(layer, FusedMoE)` holding (directly, as one part of a conjunction that
    holds, or as a negation that fails) where every class the asker can be is a `FusedMoE`."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _names_kind(names, test.operand, not truth, given, lineage)
    if isinstance(test, ast.BoolOp):
        if isinstance(test.op, ast.And) != truth:
            return False  # a disjunction that holds (or a conjunction that fails) says no one part
        return any(_names_kind(names, v, truth, given, lineage) for v in test.values)
    return truth and _is_isinstance(test, given) and _fails(names, test, False, given, lineage)


def _is_isinstance(test: ast.expr, given: frozenset) -> bool:
    return (isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "isinstance"
            and len(test.args) == 2 and isinstance(test.args[0], ast.Name) and test.args[0].id in given)


def _fails(names: _Names, test: ast.expr, truth: bool, given: frozenset, lineage: set[str]) -> bool:
    """Whether `test` can never have the truth `truth` for any class the call can pass as the
    parameters `given`: `isinstance(p, X)` is never true where no class of the asking object's
    lineage is an `X`, never false where every one is; `not`, `and` and `or` follow. Anything
    else may have either truth."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _fails(names, test.operand, not truth, given, lineage)
    if isinstance(test, ast.BoolOp):
        parts = [_fails(names, v, truth, given, lineage) for v in test.values]
        # `A and B` is true only if every part is, false if any part is (the other way for `or`).
        every_part = isinstance(test.op, ast.And) == truth
        return any(parts) if every_part else all(parts)
    if not _is_isinstance(test, given):
        return False
    kinds = test.args[1].elts if isinstance(test.args[1], ast.Tuple) else [test.args[1]]
    quals = [names.cls(_dotted(k)) for k in kinds]
    if None in quals:
        return False  # a class outside the tree (or unreadable): it may be anything
    index = names.ctx.index
    hits = [any(q in index.mro(c) for q in quals) for c in lineage]
    return not any(hits) if truth else all(hits)
