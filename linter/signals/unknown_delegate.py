"""unknown-delegate: a wrapper paired with an implementation the code never gives it is latent.

A delegate's declared type (a parameter annotated `Base`, a factory declared `-> Base`) bounds
what it can hold; it does not say that every subclass of `Base` is ever put there. The code
says so where it builds one: following every assignment of the delegate to what its builders
pass, through parameters, locals, the returns of functions and methods, and registries
(passed_values.py, registries.py), over the paths the tree shows. A pairing of the wrapper with
an implementation that no such path builds (nor a wrapper such a path builds holds, a few levels
down) is not a configuration the code shows: latent, not reported as drift.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..findings import Reason, short
from ..model.confidence import Pairing, Signal
from ..model.passed_values import OUTSIDE, external

if TYPE_CHECKING:
    from ..model.context import Context

MAX_NESTING = 3


class UnknownDelegate(Signal):
    name = "unknown-delegate"
    doc = ("Rules out a wrapper paired with an implementation that no path of the code puts into the "
           "delegate: every assignment of the delegate is followed to what its builders build (parameters, "
           "locals, returns, registries); a declared type alone names no configuration.")

    def rule_out(self, ctx: Context, p: Pairing) -> Reason | None:
        model = ctx.model
        w = model.wrappers.get(p.wrapper) if p.wrapper else None
        if w is None:
            return None
        outside = _held_from_outside(ctx, w, p.impl)
        if outside is not None:
            return outside
        if not ctx.tree.calls.init_calls(w.qual):
            return None  # built only outside the tree (an API): what it holds is the caller's choice
        memo = ctx.state(UnknownDelegate, dict)
        if _built(model, ctx.tree.built_values, w, p.impl, memo, 0):
            return None
        entry = ctx.index.classes[w.qual]
        attrs = ", ".join(f"`self.{d.attr}`" for d in model.delegates_able_to_hold(w, p.impl))
        return Reason(self.name, "lower", entry.file.display, entry.info.line,
                      f"no path of the code puts `{short(p.impl)}` into {attrs or 'its delegates'} of "
                      f"`{entry.info.name}`: only a declared type allows it")


def _held_from_outside(ctx: Context, w, impl: str) -> Reason | None:
    """Every delegate that could hold `impl` holds, by every assignment of it, only what a package
    outside the tree provides (a class loaded with `importlib`): whoever builds the wrapper, no
    class of the tree is ever there, and its annotation stands in for the outside one."""
    holding = ctx.model.delegates_able_to_hold(w, impl)
    found = []
    for d in holding:
        got = ctx.tree.passed_values.attribute_values(w.qual, d.attr)
        names = external(got.values) if got is not None else []
        if not names:
            return None
        found.append((d.attr, names, got.steps))
    if not found:
        return None
    attr, names, steps = found[0]
    where = steps[0] if steps else None
    entry = ctx.index.classes[w.qual]
    return Reason(UnknownDelegate.name, "lower", where.path if where else entry.file.display,
                  where.line if where else entry.info.line,
                  f"`self.{attr}` of `{entry.info.name}` holds only `{names[0]}`"
                  f"{f' and {len(names) - 1} more' if len(names) > 1 else ''}, from outside the tree: "
                  f"never `{short(impl)}`")


def _built(model, built_values, w, impl: str, memo: dict, depth: int) -> bool:
    holding = model.delegates_able_to_hold(w, impl)
    if not holding:
        return depth == 0  # the pairing is reached some other way: not this signal's question
    for d in holding:
        key = (w.qual, d.attr)
        if key not in memo:
            got = built_values.attribute_values(w.qual, d.attr)
            memo[key] = frozenset(k for k in got.values if isinstance(k, str) or k == OUTSIDE) if got else frozenset()
        built = memo[key]
        if impl in built or OUTSIDE in built:
            return True  # built with it, or handed whatever an API's caller passes
        for b in built:
            inner = model.wrappers.get(b)
            if inner is not None and depth < MAX_NESTING and _built(model, built_values, inner, impl, memo, depth + 1):
                return True
    return False

