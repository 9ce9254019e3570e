"""delegate-raises: forwarding the hook would not help, the delegate the wrapper builds refuses it too.

A wrapper that skips a hook (AL001) or answers it with its base's default (AL003) loses behaviour
only where the implementation it holds would have done something. An implementation whose hook
only hands the call on to an object of its own (`return self._kvcache.get_cpu_copy(indices)`)
does what that object does. When the wrapper builds its delegates around an object of its own
(`PagedAllocator(size, ..., kvcache)`, `kvcache` the wrapper's own `HiSparsePool | SparsePool`)
and every class that object can be refuses the hook (`raise NotImplementedError`, or has no such
member), forwarding from the wrapper would raise the same error: no configuration is broken by the
gap, the pairing is latent.

Read from the code alone: the implementation's body is one call `self.<attr>.<m>(...)` (returned
or not); the `__init__` parameter that `self.<attr>` is stored from (also through
`super().__init__(...)`); every store of the wrapper's delegate that can hold the implementation
is a call whose argument for that parameter is a name or `self` attribute of the wrapper; and
every class that argument can be, with every subclass, refuses `<m>`. Anything else says nothing.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from ..findings import Reason, short
from ..model.confidence import Pairing, Signal
from ..model.resolve import Scope
from ..refs import is_call, is_name, is_super_init

if TYPE_CHECKING:
    from ..model.context import Context


class DelegateRaises(Signal):
    name = "delegate-raises"
    doc = ("Rules out a pairing whose implementation only hands the hook on to an object the wrapper builds it "
           "around, when every class that object can be refuses the hook (`raise NotImplementedError`, or no "
           "such member): forwarding from the wrapper would raise the same error.")

    def rule_out(self, ctx: Context, p: Pairing) -> Reason | None:
        if p.rule not in ("AL001", "AL003") or p.wrapper is None or p.wrapper not in ctx.index.classes \
                or p.impl not in ctx.index.classes:
            return None
        memo = ctx.state(DelegateRaises, dict)
        key = (p.wrapper, p.impl, p.member)
        if key not in memo:
            memo[key] = _refused_through(ctx, p.wrapper, p.impl, p.member)
        found = memo[key]
        if found is None:
            return None
        attr, member, classes, path, line = found
        shown = ", ".join(f"`{short(c)}`" for c in classes[:3]) + (f" and {len(classes) - 3} more"
                                                                   if len(classes) > 3 else "")
        return Reason(self.name, "lower", path, line,
                      f"`{short(p.impl)}.{p.member}` hands the call to `self.{attr}.{member}`, and "
                      f"`{short(p.wrapper)}` builds it around {shown}, which refuse `{member}`: forwarding "
                      f"would raise the same error")


def _refused_through(ctx: Context, wrapper: str, impl: str, member: str):
    index = ctx.index
    found = index.method(impl, member)
    if found is None:
        return None
    hop = _one_forward(ctx, found.owner, found.fn)
    if hop is None:
        return None
    attr, inner = hop
    param = _stored_from(ctx, impl, attr)
    if param is None:
        return None
    init = index.method(impl, "__init__")
    holding = ctx.model.delegates_able_to_hold(ctx.model.wrappers[wrapper], impl) if wrapper in ctx.model.wrappers \
        else []
    if init is None or not holding:
        return None
    params = [q.name for q in init.fn.params[1:]]
    if param not in params:
        return None
    position = params.index(param)
    classes: set[str] = set()
    where = None
    for d in holding:
        stores = [(c, method, value, line) for c in index.mro(wrapper) if c in index.classes
                  for method, (value, _ann, line) in index.assignments(c).get(d.attr, ())]
        if not stores:
            return None
        for c, method, value, line in stores:
            if value is None or not is_call(value):
                return None
            scope = Scope(index.classes[c].module, c, method)
            node = ctx.tree.text.call_node(scope, value[2], value[3])
            if node is None or any(isinstance(a, ast.Starred) for a in node.args) \
                    or any(k.arg is None for k in node.keywords):
                return None
            arg = next((k.value for k in node.keywords if k.arg == param), None)
            if arg is None and position < len(node.args):
                arg = node.args[position]
            given = _classes_of(ctx, scope, arg)
            if not given:
                return None
            classes |= given
            where = where or (index.classes[c].file.display, line)
    everything = classes | {s for c in classes for s in index.descendants(c)}
    if not everything or not all(_refuses(index, c, inner) for c in everything):
        return None
    return attr, inner, sorted(classes), where[0], where[1]


def _one_forward(ctx: Context, owner: str, fn) -> tuple[str, str] | None:
    """(`attr`, `m`) where the method's body is only `self.<attr>.<m>(...)`, returned or not."""
    got = ctx.tree.text.source(Scope(ctx.index.classes[owner].module, owner, fn))
    if got is None or not fn.params:
        return None
    body = [s for s in getattr(got.node, "body", []) if not (isinstance(s, ast.Expr)
                                                            and isinstance(s.value, ast.Constant))]
    if len(body) != 1 or not isinstance(body[0], (ast.Return, ast.Expr)):
        return None
    call = body[0].value
    me = fn.params[0].name
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
            and isinstance(call.func.value, ast.Attribute) and isinstance(call.func.value.value, ast.Name)
            and call.func.value.value.id == me):
        return None
    return call.func.value.attr, call.func.attr


def _stored_from(ctx: Context, impl: str, attr: str) -> str | None:
    """The implementation's own `__init__` parameter that `self.<attr>` is stored from: directly,
    or handed by position or keyword to `super().__init__(...)`, which stores it."""
    model = ctx.model
    sources = model.delegate_sources(impl, attr)
    init = ctx.index.method(impl, "__init__")
    if not sources or init is None:
        return None
    names = {q.name for q in init.fn.params[1:]}
    for _scope, construction, params, used, _label in sources:
        if len(used) != 1:
            return None
        if not is_super_init(construction[0]):  # stored by the implementation's own `__init__`
            return used[0] if used[0] in names else None
        _callee, args, kwargs, _star = construction
        given = dict(kwargs).get(used[0])
        if given is None and used[0] in params and params.index(used[0]) < len(args):
            given = args[params.index(used[0])]
        if given and is_name(given) and given[1] in names:
            return given[1]
        return None
    return None


def _classes_of(ctx: Context, scope: Scope, arg: ast.expr | None) -> set[str]:
    """The in-tree classes a plain name or `self.<attr>` of the wrapper's method can be."""
    if isinstance(arg, ast.Name):
        ref = ("name", arg.id)
    elif isinstance(arg, ast.Attribute) and isinstance(arg.value, ast.Name) and scope.fn.params \
            and arg.value.id == scope.fn.params[0].name:
        ref = ("attr", ("name", arg.value.id), arg.attr)
    else:
        return set()
    res = ctx.resolver.resolve(ref, scope)
    if not res.types or not all(isinstance(t, str) for t in res.types):
        return set()
    return {t for t in res.types if t in ctx.index.classes}


def _refuses(index, qual: str, member: str) -> bool:
    """The class raises for the member: its own or inherited body only raises NotImplementedError,
    or it has no such member and no `__getattr__` to make one."""
    found = index.method(qual, member)
    if found is None:
        return index.lookup(qual, member) is None and not index.has_getattr_hook(qual)
    return found.fn.unimplemented
