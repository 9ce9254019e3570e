"""unpassed-option: a delegate no code in the tree hands over is not a configuration the tree builds.

`def __init__(self, ..., solver_p: SchedulerMixin = None): self.solver_p = solver_p` says only
what a caller may pass. When no call in the tree passes `solver_p` (no `solver_p=` keyword
anywhere, and no construction of the class fills that position), every in-tree configuration
holds the default; which class the attribute holds otherwise is decided by code outside the tree.
The annotation bounds that choice, it does not make it: pairing the class with every subclass of
`SchedulerMixin` is "unknown" taken for "everything". Such pairings stay visible as latent.

A construction that spreads `*args` or `**kwargs` may pass the option: where one exists the
signal says nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..findings import Reason
from ..model.confidence import Pairing, Signal
from ..perfile.summary import VAR_KEYWORD, VAR_POSITIONAL
from ..refs import is_attr, is_name, is_self

if TYPE_CHECKING:
    from ..model.context import Context
    from ..perfile.summary import FunctionInfo, Param


class UnpassedOption(Signal):
    name = "unpassed-option"
    doc = ("Rules out a pairing whose implementation reaches the delegate only through a constructor "
           "parameter with a default that no call in the tree passes (no keyword of that name "
           "anywhere, no construction filling its position): what the delegate holds then is chosen "
           "outside the tree, and its annotation bounds that choice without making it.")

    def rule_out(self, ctx: Context, p: Pairing) -> Reason | None:
        if p.wrapper is None or p.wrapper not in ctx.index.classes:
            return None
        attrs = _attrs_holding(ctx, p)
        if not attrs:
            return None
        memo = ctx.state(UnpassedOption, dict)
        found = []
        for attr in attrs:
            key = (p.wrapper, attr)
            if key not in memo:
                memo[key] = _unpassed(ctx, p.wrapper, attr)
            if memo[key] is None:
                return None
            found.append(memo[key])
        init, param, owner = found[0]
        entry = ctx.index.classes[owner]
        return Reason(self.name, "lower", entry.file.display, init.line,
                      f"`{entry.info.name}.{attrs[0]}` is set only from `__init__`'s `{param.name}`, which has a "
                      f"default and which no call in the tree passes: what it holds is chosen outside the tree")


def _attrs_holding(ctx: Context, p: Pairing) -> list[str]:
    """The wrapper's attributes through which the pairing's implementation is held: the
    receiver's own `self.<attr>` at a call in the class (AL002), else the wrapper's delegates
    whose classes include the implementation."""
    site = p.site
    recv = p.receiver
    if p.kind == "call" and site.cls == p.wrapper and recv is not None and is_attr(recv) \
            and site.fn.params and is_self(recv[1], site.fn.params[0].name):
        return [recv[2]]
    model = ctx.model
    w = model.wrappers.get(p.wrapper)
    if w is None:
        return []
    return [d.attr for d in model.delegates_able_to_hold(w, p.impl)]


def _unpassed(ctx: Context, qual: str, attr: str) -> tuple[FunctionInfo, Param, str] | None:
    """(`__init__`, its parameter, the class defining it) when every store of `self.<attr>` in
    the class and its bases is that parameter of `__init__`, it has a default, and nothing in the
    tree passes it."""
    index = ctx.index
    stores = []
    for c in index.mro(qual):
        if c not in index.classes:
            continue
        for method, (value, _ann, _line) in index.assignments(c).get(attr, ()):
            stores.append((c, method, value))
    if not stores:
        return None
    owner, init, value = stores[0]
    if any(m is not init or v != value for _, m, v in stores) or init.name != "__init__" \
            or value is None or not is_name(value):
        return None
    position = next((i for i, prm in enumerate(init.params) if prm.name == value[1]), None)
    if position is None or position == 0:
        return None
    param = init.params[position]
    if not param.has_default or param.kind in (VAR_POSITIONAL, VAR_KEYWORD) or param.name in init.locals:
        return None  # rebound in the body: the store may hold something else
    if ctx.tree.value_uses.keyword_passed(param.name):
        return None
    for _scope, (_, args, kwargs, star), _label in ctx.tree.calls.init_calls(owner):
        if star or position - 1 < len(args) or any(k == param.name for k, _ in kwargs):
            return None
    return init, param, owner

