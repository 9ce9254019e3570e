"""Pairings the code itself cannot run: the delegate's own consumer would crash on the wrapper.

Code that probes an optional hook on the installed object and, on the same path, calls a member
unguarded that only some implementations have (`b = get_backend(); if hasattr(b, "hook"): ...;
b.impl_only()`) was written for those implementations: with a wrapper installed that lacks the
member (neither defines nor inherits it, no `__getattr__`), the hard call raises AttributeError
whatever the probe says. The wrapper holding that implementation is not a configuration the code
supports, so the probe's silent skip is not what breaks it.

"The same object" is read from the summary: the same receiver expression (a local, `self.x`, a
narrowing `cast`/annotated local), or a call of the same accessor (`get_backend()` twice). "On the
same path": every flag test that decides the hard call also decides the probe (linter/guards.py),
and the call is not itself guarded by a probe of its member. The reason is said once per
(wrapper, implementation): every finding it hides carries the same text, so latent findings group.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..confidence import Pairing, Signal
from ..findings import Reason, short
from ..guards import deciding

if TYPE_CHECKING:
    from ..context import Context


class UnsupportedPairing(Signal):
    name = "unsupported-pairing"
    doc = ("Where a probe's own function calls, on the same object and the same path, a member only "
           "some implementations have, a wrapper lacking it would crash there first: the wrapper "
           "holding such an implementation is a pairing the code itself cannot run.")

    def rule_out(self, ctx: "Context", p: Pairing) -> Reason | None:
        if p.wrapper is None or p.receiver is None or p.kind != "probe":
            return None
        memo = ctx.__dict__.setdefault("_unsupported_pairing_memo", {})
        pair = (p.wrapper, p.impl)
        use = _hard_use(ctx, p)
        if use is None:
            return None
        if pair not in memo:
            path, line, what = use
            memo[pair] = Reason(self.name, "lower", path, line,
                                f"`{short(p.wrapper)}` holding `{short(p.impl)}` cannot run: the code that "
                                f"probes it reads {what}, unguarded on the same object ({path}:{line})")
        return memo[pair]


def _object_keys(fn, ref: tuple | None) -> set:
    """What names the object a ref reads: the ref itself, and the accessor it was fetched from
    (`get_backend()` directly or through a local bound to it): one accessor, one installed object."""
    if ref is None:
        return set()
    values = fn.locals.get(ref[1], ()) if ref[0] == "name" else (ref,)
    keys = {("accessor", v[1]) for v in values if v and v[0] == "call" and v[1] is not None}
    if ref[0] != "call":
        keys.add(ref)
    return keys


def _hard_use(ctx: "Context", p: Pairing) -> tuple[str, int, str] | None:
    """(path, line, what) of an unguarded read of the probed object that the wrapper cannot serve
    but `impl` can."""
    index = ctx.index
    fn = p.site.fn
    if not fn.reads or p.impl not in index.classes or p.wrapper not in index.classes \
            or index.has_getattr_hook(p.wrapper) or index.opaque_bases(p.wrapper):
        return None
    obj = _object_keys(fn, p.receiver)
    if not obj:
        return None
    probed = {q.member for q in fn.probes if q.receiver is None or _object_keys(fn, q.receiver) & obj}
    at_probe = deciding(fn.guards, p.line)
    for read in fn.reads:
        if read.attr in probed or not (_object_keys(fn, read.receiver) & obj):
            continue
        if not deciding(fn.guards, read.line) <= at_probe:
            continue  # decided by a test the probe is not: another path
        what = _wrapper_fails(index, p.wrapper, p.impl, read.attr, read.chained)
        if what:
            return p.site.path, read.line, what
    return None


def _wrapper_fails(index, wrapper: str, impl: str, attr: str, chained: bool) -> str | None:
    """Why reading `attr` (and, when chained, something off it) works on `impl` and fails on the
    wrapper; None when it does not."""
    on_impl = index.lookup(impl, attr)
    if on_impl is None:
        return None
    found = index.lookup(wrapper, attr)
    if found is None:
        return f"`.{attr}`, which `{short(wrapper)}` lacks"
    if not chained or any(attr in index.assignments(c) for c in index.mro(wrapper) if c in index.classes):
        return None
    owner = index.classes.get(found[0])
    ca = owner.info.attrs.get(attr) if owner else None
    if ca is None or ca.value is not None or attr in owner.info.methods:
        return None
    # The wrapper has only the class-level constant default (`meta = None`); `impl` sets its own.
    if any(attr in index.assignments(c) for c in index.mro(impl) if c in index.classes):
        return (f"`.{attr}.…`, where `{short(wrapper)}` has only `{owner.info.name}`'s class-level "
                f"default for `{attr}` and never sets it")
    return None
