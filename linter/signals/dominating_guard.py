"""Dominating guards: a flag tested before the call decides which delegate was built.

A wrapper that builds its delegate under a flag (`if use_x: self.inner = A(...) else: self.inner =
B(...)`, keeping `self.use_x = use_x`) and then calls the delegate under a test of the same flag
(`assert self.use_x`, `if not self.use_x: return`, `if self.use_x:`) can meet at that call only the
delegates its constructor builds where the flag has the tested value. A pairing whose
implementation only the other branches can produce never runs there.

Conservative by construction: every assignment of the delegate attribute in the wrapper's classes
(its bases and its subclasses) is read; one that no test of the flag decides, or whose value the
index cannot resolve, may hold anything; the flag must be stored from a parameter of the method that
stores it, everywhere it is stored. Reads linter/perfile/guards.py's per-function guards.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..findings import Reason, short
from ..model.confidence import Pairing, Signal
from ..model.resolve import Scope
from ..perfile.guards import dominating, self_flag
from ..refs import is_iter, is_name, is_sub

if TYPE_CHECKING:
    from ..model.context import Context


class DominatingGuard(Signal):
    name = "dominating-guard"
    doc = ("A call or probe on `self.<delegate>` dominated by a test of a flag (`assert self.use_x`, "
           "`if self.use_x:`) meets only the delegates the constructor builds where that flag has the "
           "tested value; an implementation only the other branches build never runs there.")

    def rule_out(self, ctx: Context, p: Pairing) -> Reason | None:
        site = p.site
        if p.wrapper is None or site.cls is None or not site.fn.params or not site.fn.guards:
            return None
        self_name = site.fn.params[0].name
        tested = {}
        for ref, positive in dominating(site.fn.guards, p.line):
            flag = self_flag(ref, self_name)
            if flag is not None:
                tested.setdefault(flag, set()).add(positive)
        tested = {f: next(iter(v)) for f, v in tested.items() if len(v) == 1}
        if not tested:
            return None
        attr = _own_attr(p.receiver, self_name)
        if attr is None:
            return None
        memo = ctx.state(DominatingGuard, dict)
        key = (p.wrapper, site.cls, attr, tuple(sorted(tested.items())), p.impl)
        if key not in memo:
            memo[key] = _decide(ctx, p.wrapper, site.cls, attr, tested, p.impl)
        hit = memo[key]
        if hit is None:
            return None
        flag, positive, path, line, apart = hit
        test = f"self.{flag}" if positive else f"not self.{flag}"
        also = (f"; no call in the tree passes {', '.join(f'`{a}`' for a in apart)} together with `{flag}`"
                if apart else "")
        return Reason(self.name, "lower", site.path, p.line,
                      f"`{test}` holds here; `{short(p.impl)}` can be `self.{attr}` only where "
                      f"`{flag}` is {'False' if positive else 'True'} ({path}:{line}){also}")


def _own_attr(ref: tuple | None, self_name: str) -> str | None:
    """`x` of a receiver `self.x` (or an item of it, `self.x[i]`): the delegate the constructor built."""
    while is_sub(ref) or is_iter(ref):
        ref = ref[1]
    return self_flag(ref, self_name) if ref is not None else None


def _decide(ctx: Context, wrapper: str, site_cls: str, attr: str, tested: dict[str, bool],
            impl: str) -> tuple | None:
    """(flag, polarity, path, line of an excluded assignment that builds `impl`) or None."""
    index = ctx.index
    if wrapper not in index.classes or site_cls not in index.mro(wrapper):
        return None
    classes = set(index.mro(wrapper)) | index.descendants(site_cls)
    impl_mro = set(index.mro(impl)) if impl in index.classes else {impl}
    excluded_by = None
    apart: set[str] = set()  # parameters never passed together with the flag's
    flags_stored_from_params = dict.fromkeys(tested, True)
    for c in sorted(classes):
        entry = index.classes.get(c)
        if entry is None:
            continue
        for flag in tested:
            for method, (value, _, _) in index.assignments(c).get(flag, ()):
                if not (value and is_name(value) and any(q.name == value[1] for q in method.params)):
                    flags_stored_from_params[flag] = False
        ca = entry.info.attrs.get(attr)
        if ca is not None and ca.value is not None:
            return None  # a class-level default: held wherever no constructor replaces it
        for method, (value, ann, line) in index.assignments(c).get(attr, ()):
            types = _types(ctx, entry, method, value, ann)
            if types is not None and not (types & impl_mro):
                continue  # this assignment never holds `impl`
            decided = _decided(method, line, tested)
            if decided is None:
                passed = _never_together(ctx, c, method, line, tested)
                if passed:
                    apart |= passed
                    continue
                return None  # it may hold `impl` where the tested flags hold
            excluded_by = excluded_by or (*decided, entry.file.display, line)
    if excluded_by is None or not all(flags_stored_from_params.values()):
        return None
    return (*excluded_by, tuple(sorted(apart)))


def _types(ctx: Context, entry, method, value, ann) -> frozenset | None:
    """The classes an assignment can hold; None when the index cannot tell (anything)."""
    resolver = ctx.resolver
    if ann is not None:
        types = resolver.annotation(ann, entry.module)
        if types:
            return frozenset(t for t in types if isinstance(t, str)) or None
    if value is None:
        return None
    r = resolver.resolve(value, Scope(entry.module, entry.qual, method))
    found = r.instances()
    return frozenset(found) if found else None


def _decided(method, line: int, tested: dict[str, bool]) -> tuple[str, bool] | None:
    """The tested flag (and the value the site requires) that a guard of the assignment contradicts."""
    self_name = method.params[0].name if method.params else None
    stored = {}  # parameter -> the flag it is stored as
    for flag in tested:
        for value, _, _ in method.self_attrs.get(flag, ()):
            if value and is_name(value):
                stored[value[1]] = flag
    for ref, positive in dominating(method.guards, line):
        flag = self_flag(ref, self_name)
        if flag is None and is_name(ref):
            flag = stored.get(ref[1])
        if flag in tested and tested[flag] != positive:
            return flag, tested[flag]
    return None


def _never_together(ctx: Context, cls: str, method, line: int, tested: dict[str, bool]) -> set[str]:
    """An `__init__` assignment made only when a parameter is passed (`if inner is not None:`, the
    parameter defaulting to None), in a class that no call in the tree builds passing both that
    parameter and the one the tested flag is stored from (which defaults to false): where the flag
    holds, this assignment never ran. Every call running this `__init__` must be seen. Returns the
    parameters the assignment needs (empty: it may run with the flag)."""
    if method.name != "__init__":
        return set()
    falsy = set(method.falsy_defaults)
    needs = {ref[1] for ref, positive in dominating(method.guards, line)
             if positive and is_name(ref) and ref[1] in falsy}
    stored = {}
    for flag, positive in tested.items():
        for value, _, _ in method.self_attrs.get(flag, ()):
            if positive and value and is_name(value) and value[1] in falsy:
                stored[flag] = value[1]
    if not needs or not stored:
        return set()
    flag = min(stored)
    sources = ctx.model.delegate_sources(cls, flag)
    if not sources:
        return set()  # built nowhere in the tree: by code we cannot see
    wanted = needs | set(stored.values())
    for _, (_, args, kwargs, star), params, _, _ in sources:
        if star:
            return set()
        passed = {k for k, _ in kwargs} | set(params[:len(args)])
        if wanted <= passed:
            return set()
    return needs
