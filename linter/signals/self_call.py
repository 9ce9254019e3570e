"""self-call: a call an implementation's own instances make decides the pairing.

A call on `self` in a method an implementation inherits (a base's, not overridden) runs on that
implementation's instances wherever something runs that method on one. The tree shows it:

* the method is run on one: called on `self` in a method the implementation also runs as its own,
  handed on as `self.<method>` there (a thread's target, a dispatch table), called on a receiver
  that can hold the implementation, or a protocol method Python calls itself (`__call__`);
* and the implementation is built (a call of it, or the class handed on as a value: a table or
  factory of classes).

Then the pairing is not a possibility read off a declared type but what the code does, with
these very arguments: for a call that cannot bind (AL002) the TypeError is certain. That is the
evidence `high` needs, and the signal supports the pairing. Where the tree shows calls of the
method and none can run it on the implementation (a subclass that overrides every caller), the
call never meets it: the pairing is ruled out. Where the tree shows no call at all (a public
entry, or a name called at run time) it says nothing.

For a hook a wrapper hides or answers with a placeholder (AL001, AL003) the call on `self` is made
on the wrapper, and what is lost depends on what the hook does there: not this signal's claim.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from ..findings import Reason, short
from ..model.confidence import Pairing, Signal
from ..model.resolve import Scope
from ..refs import is_self

if TYPE_CHECKING:
    from ..model.context import Context


class SelfCall(Signal):
    name = "self-call"
    doc = ("Decides a call made on `self` in a method an implementation inherits: supported where the tree "
           "runs that method on the implementation and builds one, ruled out where every call of the method "
           "the tree shows runs on other classes.")

    def rule_out(self, ctx: Context, p: Pairing) -> Reason | None:
        if not _applies(ctx, p) or _runs_on(ctx, p.impl, p.site.fn.name) is not False:
            return None
        return Reason(self.name, "lower", p.site.path, p.site.fn.line,
                      f"no call of `{p.site.fn.name}` the tree shows runs it on `{short(p.impl)}` "
                      f"(its callers run on other classes): this call never meets it")

    def support(self, ctx: Context, p: Pairing) -> Reason | None:
        if not _applies(ctx, p) or not _runs_on(ctx, p.impl, p.site.fn.name) \
                or not runs_unconditionally(ctx, p):
            return None
        built = built_at(ctx, p.impl)
        if built is None:
            return None
        path, line, where = built
        return Reason(self.name, "raise", path, line,
                      f"`{short(p.impl)}` runs `{short(p.site.cls)}.{p.site.fn.name}` as its own, the tree runs "
                      f"that method on it, and builds one ({where}): the call is made on it")


def runs_unconditionally(ctx: Context, p: Pairing) -> bool:
    """The call runs whenever its method does: no test, loop or handler lies between the method's
    body and it (a `try` or `with` body does not decide whether it runs). A call under a test may
    be one the implementation never meets (the data that takes that branch is another's)."""
    got = ctx.tree.text.source(p.site.scope)
    if got is None:
        return False

    def within(body: list) -> bool:
        for stmt in body:
            if not (stmt.lineno <= p.line <= (stmt.end_lineno or stmt.lineno)):
                continue
            if isinstance(stmt, (ast.Try, getattr(ast, "TryStar", ast.Try))):
                return within(stmt.body) or within(stmt.finalbody)
            if isinstance(stmt, (ast.With, ast.AsyncWith)):
                return within(stmt.body)
            if isinstance(stmt, (ast.If, ast.For, ast.AsyncFor, ast.While, ast.Match, ast.FunctionDef,
                                 ast.AsyncFunctionDef, ast.ClassDef)):
                return False
            return not any(_at(part) for n in ast.walk(stmt) for part in _maybe_evaluated(n))
        return False

    def _at(node: ast.AST) -> bool:
        return any(isinstance(n, ast.Call) and n.lineno == p.line for n in ast.walk(node))

    return within(got.node.body)


def _maybe_evaluated(node: ast.AST) -> list[ast.AST]:
    """The parts of an expression that run only sometimes: a conditional's branches, the operands
    of `and`/`or` after the first, a comprehension's or a lambda's body."""
    if isinstance(node, ast.IfExp):
        return [node.body, node.orelse]
    if isinstance(node, ast.BoolOp):
        return node.values[1:]
    if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp, ast.Lambda)):
        return [node]
    return []


def _applies(ctx: Context, p: Pairing) -> bool:
    """An AL002 pairing whose call is on `self`, in a method the implementation inherits."""
    site, fn = p.site, p.site.fn
    if p.rule != "AL002" or p.kind != "call" or site.cls is None or fn.kind != "method" or not fn.params \
            or not is_self(p.receiver, fn.params[0].name) or p.impl not in ctx.index.classes:
        return False
    runs = ctx.index.method(p.impl, fn.name)
    return runs is not None and runs.owner == site.cls


MAX_DEPTH = 6  # methods followed up a chain of `self` calls to one that the tree runs on the object


def _runs_on(ctx: Context, impl: str, name: str, depth: int = 0) -> bool | None:
    """Whether the tree runs `impl`'s method `name` on an instance of `impl`: True where it shows a
    way that certainly does (a protocol method; a call on an attribute built with `impl`; a call on
    `self`, or `self.name` handed on, in a method itself run on one), False where it shows calls of
    it and none can, None where it may (a receiver whose declared type allows `impl`, a method with no
    caller in the tree: an entry point or a name called at run time)."""
    memo = ctx.state(_runs_on, dict)
    key = (impl, name)
    if key in memo:
        return memo[key]
    memo[key] = None  # while deciding: a cycle of `self` calls decides nothing
    memo[key] = _find_runs(ctx, impl, name, depth)
    return memo[key]


def _find_runs(ctx: Context, impl: str, name: str, depth: int) -> bool | None:
    index = ctx.index
    if name.startswith("__") and name.endswith("__"):
        return True  # Python calls it itself (`obj(...)`, `len(obj)`)
    seen, maybe = False, False
    for site, _call, (recv, _member, _how) in ctx.member_calls.get(name, ()):
        seen = True
        fn = site.fn
        if site.cls is not None and fn.params and is_self(recv, fn.params[0].name):
            runs = index.method(impl, fn.name)
            protocol = fn.name.startswith("__") and fn.name.endswith("__") and site.cls in index.mro(impl)
            if not protocol and (runs is None or runs.owner != site.cls):
                continue  # a `self` call in a method the implementation does not run
            # (A base's `__init__` runs too, through the `super().__init__(...)` of those below it.)
            got = True if protocol else _runs_on(ctx, impl, fn.name, depth + 1) if depth < MAX_DEPTH else None
            if got:
                return True
            maybe = maybe or got is None
            continue
        if recv is None:
            maybe = True
            continue
        held = ctx.model.classes_read_from_own_attrs(site.cls, fn, recv) if site.cls is not None else None
        if held is not None:  # an attribute of the caller's, built with exactly these
            if impl in held:
                return True
            continue
        types = ctx.receiver_types(site, recv).instances()
        maybe = maybe or any(t == impl or impl in index.descendants(t) for t in types if t in index.classes)
    for method in _handed_on(ctx, impl, name):
        got = _runs_on(ctx, impl, method, depth + 1) if depth < MAX_DEPTH else None
        if got:
            return True
        maybe = maybe or got is None
    if maybe or not seen or ctx.tree.value_uses.method(name):
        return None
    return False


def _handed_on(ctx: Context, impl: str, name: str) -> list[str]:
    """The methods `impl` runs as its own that use `self.name` as a value (not
    called): the bound method of that very object goes to whatever runs it (a thread, a table of
    handlers, a dispatch attribute)."""
    return [method for method, found in sorted(ctx.index.member_table(impl)[0].items())
            if found.kind == "method" and name in _self_values(ctx, found.owner, method)]


def _self_values(ctx: Context, owner: str, method: str) -> frozenset[str]:
    """The attributes of `self` a method uses as values, not called (read from its text once:
    every implementation that runs the method, and every name asked, share it)."""
    memo = ctx.state(_self_values, dict)
    key = (owner, method)
    hit = memo.get(key)
    if hit is None:
        entry = ctx.index.classes[owner]
        fn = entry.info.methods[method]
        got = ctx.tree.text.source(Scope(entry.module, owner, fn)) if fn.params else None
        hit = frozenset()
        if got is not None:
            me = fn.params[0].name
            called = {id(n.func) for n in ast.walk(got.node) if isinstance(n, ast.Call)}
            hit = frozenset(n.attr for n in ast.walk(got.node) if isinstance(n, ast.Attribute)
                            and isinstance(n.value, ast.Name) and n.value.id == me and id(n) not in called)
        memo[key] = hit
    return hit


def built_at(ctx: Context, qual: str) -> tuple[str, int, str] | None:
    """Where the tree builds `qual`: a call of it by name (`Impl(...)`, also returned or handed
    on), else the class used as a value (a table or factory of classes builds what it holds);
    None where it shows neither (as AL002's `unbuilt-override` reads it)."""
    from .model_reach import reach_of

    index, calls, reach = ctx.index, ctx.tree.calls, reach_of(ctx)
    name = short(qual)
    built = calls.constructions_of(qual, True)
    if built:
        scope = built[0][0]
        where = f"{short(scope.cls)}.{scope.fn.name}" if scope.cls else scope.fn.name
        return index.modules[scope.module].file.display, scope.fn.line, f"in `{where}`"
    for place in reach.named_callers.get(name, ()):
        module = place[0]
        if getattr(index.resolve_name(module, name), "qual", None) == qual:
            return index.modules[module].file.display, place[3] if len(place) > 3 else 0, f"`{name}(...)`"
    if name in reach.escaped:
        return index.classes[qual].file.display, index.classes[qual].info.line, f"`{name}` is handed on as a value"
    if qual in reach.named_by_strings:
        return (index.classes[qual].file.display, index.classes[qual].info.line,
                f"`{name}` is named, with its module, in a table of classes imported by name")
    return None
