"""AL003 wrapper-inherits-noop-default: the wrapper answers a hook with the base's default (a no-op,
or a `raise NotImplementedError` placeholder), and the delegate's hook never runs."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, NamedTuple

from ..linter.findings import Evidence, Facts, Finding, shortened, tail
from ..linter.model.confidence import Pairing
from ..linter.model.families import Delegate, Wrapper
from ..linter.model.resolve import Scope
from ..linter.model.uses import Use
from .base import (
    Example,
    Reach,
    Rule,
    RuntimeCheck,
    calls_on_own_attrs,
    delegate_pairings,
    delegates_named_in_evidence,
    hands_own_operations,
    short,
)

if TYPE_CHECKING:
    from ..linter.model.context import Context
    from ..linter.model.facts import Site
    from ..linter.model.function_text import Constant
    from ..linter.model.resolve import Resolution
    from ..linter.perfile.summary import FunctionInfo

_BASE = '''
class Backend:
    def forward(self, batch):
        raise NotImplementedError

    def on_warmup_done(self):
        """Optional hook; most backends need nothing."""
        pass

class FlashBackend(Backend):
    def forward(self, batch):
        return batch

    def on_warmup_done(self):
        self.graphs_ready = True
'''

_RUNNER = '''
from serving.backends import Backend

class Runner:
    def __init__(self, backend: Backend):
        self.backend = backend

    def warmup(self):
        self.backend.on_warmup_done()
'''

# The placeholder shape: the base declares the hook and raises; the backends that can do it
# implement it (TritonBackend), the others keep the placeholder (FlashBackend).
_PLACEHOLDER_BASE = '''
class Backend:
    def forward(self, batch):
        raise NotImplementedError

    def refresh_after_draft(self, spec):
        """Redo the metadata the draft step changed; only some backends can."""
        raise NotImplementedError()

class TritonBackend(Backend):
    def forward(self, batch):
        return batch

    def refresh_after_draft(self, spec):
        self.positions = spec

class FlashBackend(Backend):
    def forward(self, batch):
        return batch
'''

_VERIFIER = '''
from serving.backends import Backend

class Verifier:
    def __init__(self, backend: Backend):
        self.backend = backend

    def verify(self, spec):
        self.backend.refresh_after_draft(spec)
'''

_HYBRID = '''
class HybridBackend(Backend):
    def __init__(self, full_attn_backend: Backend):
        self.full_attn_backend = full_attn_backend

    def forward(self, batch):
        return self.full_attn_backend.forward(batch)
'''



@dataclass(frozen=True)
class NoopDefaultFacts(Facts):
    """What an AL003 finding passes on to `--verify` (runtime_check/scenarios.py replays it)."""

    base: str | None = None  # the class whose default the wrapper inherits
    default: str | None = None  # what that default is: "noop", "constant" or "placeholder"
    delegates: tuple[str, ...] | None = None  # the wrapper's delegate attributes
    site: str | None = None  # `path:line` of the first site that reaches the wrapper
    site_kind: str | None = None  # "probe" or "call"

class WrapperInheritsNoopDefault(Rule):
    code = "AL003"
    name = "wrapper-inherits-noop-default"
    severity = "warning"
    # (over a placeholder the scenario reports "placeholder-reached" instead: its own fact)
    facts = NoopDefaultFacts
    runtime_check = RuntimeCheck(
        "noop-reached",
        "static fact reproduced: the hook resolves to the base's no-op; pairing not shown")

    def verification_pairings(self, ctx: Context, finding: Finding, facts: dict) -> list[tuple] | str:
        """The wrapper around each implementation whose hook is not the base's default."""
        base = NoopDefaultFacts.of(finding).base
        return delegate_pairings(ctx, finding, lambda owner: owner != base)
    summary = ("A wrapper inherits the family base's no-op or NotImplementedError placeholder for a hook its "
               "delegates implement.")
    doc = """\
## What it finds
A wrapper `W` that answers hook `H` with the family base's default while an implementation its
delegates can be implements `H`, and `H` is probed or called on receivers that can be `W`. The
default is one of:
- a **no-op** (a docstring, `pass`, `...`, `return`, `return None` or a constant), where the
  implementation overrides it with a real body, or, where both only return a constant, with
  another answer (`return True` over the base's `return False`, a tile size of 128 over 64; two
  false answers decide a test alike and are not reported);
- a **placeholder**: a body that only raises `NotImplementedError`, where the implementation
  overrides it with anything that does not raise it too (a no-op counts: it returns). A wrapper
  that overrides `H` with a placeholder of its own is still reported, since it raises just the
  same; as latent drift (`--show-latent`), because its author declared the hook unsupported there.

A wrapper that inherits the gap from a wrapper base is reported once, on the outermost wrapper
that has it. Not reported: a default no implementation the delegates can be overrides (nothing is
lost), an implementation whose own override is a placeholder too, a hook the wrapper forwards.

A *facade* counts as a wrapper for placeholders: a class of a family that hands at least two of
its own operations by name to one object of another family it holds (an executor forwarding
`build_model`, `warmup`, ... to its model agent) and inherits its base's `raise
NotImplementedError` for a member that object implements.

## Why it is bad
The probe succeeds and the call runs, but it runs the base's default. Over a no-op the delegate's
hook silently never runs; over a placeholder the call raises `NotImplementedError` in exactly the
configurations where the delegate would have run (a crash, often on a rare path: retraction, a
speculative-decoding mode). Unlike AL001 nothing looks wrong at the call site, and a `__getattr__`
on the wrapper does not help, because normal lookup finds the base's method first.

## Example
```python
class Backend:
    def on_warmup_done(self):
        pass
    def refresh_after_draft(self, spec):
        raise NotImplementedError()

class HybridBackend(Backend):       # holds full_attn_backend, forwards forward(...)
    ...

backend.on_warmup_done()            # FlashBackend.on_warmup_done never runs for hybrids
backend.refresh_after_draft(spec)   # NotImplementedError for hybrids, though TritonBackend implements it
```

## How to fix
Override the hook in the wrapper and forward it to every delegate that implements it (to the
delegates that may not implement a placeholder hook, only where the configuration needs it).
"""

    INVALID = [
        Example({"serving/backends.py": _BASE + _HYBRID, "serving/runner.py": _RUNNER},
                expect=(("HybridBackend", "on_warmup_done"),)),
        # The placeholder: the call raises NotImplementedError on the wrapper, though the
        # TritonBackend it can hold implements the hook.
        Example({"serving/backends.py": _PLACEHOLDER_BASE + _HYBRID, "serving/verifier.py": _VERIFIER},
                expect=(("HybridBackend", "refresh_after_draft"),)),
        # A `__getattr__` forwarding to the delegate is never consulted: the base defines the hook.
        Example({"serving/backends.py": _PLACEHOLDER_BASE + _HYBRID + '''
    def __getattr__(self, name):
        if name == "full_attn_backend":
            raise AttributeError(name)
        return getattr(self.full_attn_backend, name)
''', "serving/verifier.py": _VERIFIER}, expect=(("HybridBackend", "refresh_after_draft"),)),
    ]
    VALID = [
        Example({"serving/backends.py": _BASE + _HYBRID + '''
    def on_warmup_done(self):
        self.full_attn_backend.on_warmup_done()
''', "serving/runner.py": _RUNNER}, reaches=Reach("HybridBackend", "on_warmup_done")),
        # The wrapper forwards the placeholder hook.
        Example({"serving/backends.py": _PLACEHOLDER_BASE + _HYBRID + '''
    def refresh_after_draft(self, spec):
        self.full_attn_backend.refresh_after_draft(spec)
''', "serving/verifier.py": _VERIFIER}, reaches=Reach("HybridBackend", "refresh_after_draft")),
        # No implementation does more than the placeholder (TritonBackend's override raises too):
        # the wrapper raises where every delegate would.
        Example({"serving/backends.py": _PLACEHOLDER_BASE.replace(
            "        self.positions = spec", "        raise NotImplementedError(\"no draft support\")") + _HYBRID,
            "serving/verifier.py": _VERIFIER}, reaches=Reach("HybridBackend", "refresh_after_draft")),
    ]

    def check(self, ctx: Context) -> Iterable[Finding]:
        index, model = ctx.index, ctx.model
        used = ctx.probes.keys() | ctx.member_calls.keys()
        gaps: dict[tuple[str, str], tuple] = {}
        for wq, wrapper in sorted(model.wrappers.items()):
            opaque = bool(index.opaque_bases(wq))
            statics = wrapper.delegate_types() - {wq}
            # Leaves only: a delegate that is itself a wrapper is left to AL001 (see
            # docs/history-corpus.md, gap 2: on sglang 0.5.23 it added one pairing, never run).
            impls = model.implementations(statics, exclude=wq, nested=False,
                                         exact=wrapper.exact_types())
            for member, hit in sorted(index.member_table(wq)[0].items()):
                if member.startswith("__") or member not in used or hit.kind != "method" \
                        or member in model.structural_members:
                    continue
                base = hit.owner
                if opaque and not index.found_before_opaque(wq, base):
                    continue  # an external base may come first and answer for it
                base_fn = index.classes[base].info.methods[member]
                if base_fn.kind == "property":
                    continue
                placeholder = base_fn.unimplemented
                if base == wq:
                    # The wrapper's own method: a real override forwards or decides, but one that
                    # only raises NotImplementedError fixes nothing (the mining's trap: a "fix"
                    # replacing an inherited placeholder with another placeholder).
                    if not placeholder:
                        continue
                else:
                    if not (base_fn.noop or placeholder):
                        continue
                    if not placeholder and member in wrapper.forwarded:
                        continue  # the wrapper drives the delegates' hook itself, from another method
                    if not any(base in index.mro(t) for t in statics):
                        continue  # a mixin or an intermediate base of the wrapper's own: not the family default
                overriders = sorted({owner for owner, _ in self._implementers(ctx, impls, member, base, placeholder)})
                if not overriders:
                    continue
                sites = list(self._sites(ctx, wq, member))
                if sites:
                    holders = [i for i in impls if index.owner_of(i, member) in overriders]
                    gaps[(wq, member)] = Gap(base, base_fn, overriders, sites, holders)
        gaps.update(self._facade_gaps(ctx, used, gaps.keys()))
        for wq, member in model.outermost(gaps):
            gap = gaps[(wq, member)]
            wrapper = model.wrappers.get(wq) or self._facades(ctx)[wq]
            finding = self._report(ctx, wq, index.classes[wq], wrapper, member, gap)
            yield self.assessed(ctx, finding, [Pairing(self.code, wq, impl, member, s.site, s.line, s.kind, s.receiver)
                                               for s in gap.sites for impl in gap.holders])

    def _facade_gaps(self, ctx: Context, used, known) -> dict[tuple[str, str], Gap]:
        """A facade over an object of another family: a class of a family that hands several of
        its own operations, by their own names, to one held object (`def build_model(self):
        self.model_agent.build_model()`) while it inherits its family base's placeholder
        (`raise NotImplementedError`) for a member that object implements. The family model
        never pairs them (the held object is of another family), yet the call raises on the facade
        where the object it forwards to would have run. Placeholders only: a no-op there may be
        the facade's deliberate answer."""
        index = ctx.index
        out: dict[tuple[str, str], tuple] = {}
        for wq, wrapper in sorted(self._facades(ctx).items()):
            held = wrapper.delegate_types()
            impls = ctx.model.implementations(held, exclude=wq, leaves_only=False)
            for member, hit in sorted(index.member_table(wq)[0].items()):
                if (wq, member) in known or member.startswith("__") or member not in used or hit.kind != "method" \
                        or hit.owner == wq:
                    continue
                base_fn = index.classes[hit.owner].info.methods[member]
                if not base_fn.unimplemented or base_fn.kind == "property":
                    continue
                overriders = sorted({owner for owner, _ in self._implementers(ctx, impls, member, hit.owner, True)})
                if not overriders:
                    continue
                sites = list(self._sites(ctx, wq, member))
                if sites:
                    holders = [i for i in impls if index.owner_of(i, member) in overriders]
                    out[(wq, member)] = Gap(hit.owner, base_fn, overriders, sites, holders)
        return out

    @staticmethod
    def _facades(ctx: Context) -> dict[str, Wrapper]:
        """Classes of a family (not wrappers) handing at least two of their own methods, by name,
        to one attribute holding an object of another family: that attribute as their delegate."""
        return ctx.state(WrapperInheritsNoopDefault._facades, lambda: WrapperInheritsNoopDefault._find_facades(ctx))

    @staticmethod
    def _find_facades(ctx: Context) -> dict[str, Wrapper]:
        index, model = ctx.index, ctx.model
        out: dict[str, Wrapper] = {}
        for qual in sorted(model.family_members):
            if qual in model.wrappers or qual not in index.classes or index.opaque_bases(qual):
                continue
            for attr, calls in sorted(calls_on_own_attrs(ctx, qual).items()):
                calls = [(site, call, m) for site, call, m in calls if site.fn.name == m]
                if not hands_own_operations(calls):
                    continue
                res = ctx.resolver.attribute_of(qual, attr)
                types = frozenset(t for t in res.types if isinstance(t, str) and t in index.classes
                                  and not model.same_family(t, qual))
                if not types:
                    continue
                entry = index.classes[qual]
                shown = ", ".join(sorted(short(t) for t in types))
                note = f"`self.{attr}` holds {shown}, to which `{entry.info.name}` hands its own operations by name"
                forwards = [Evidence(site.path, call.line, f"`{entry.info.name}.{m}` forwards `{m}` to `self.{attr}`")
                            for site, call, m in calls[:2]]
                held = Evidence(entry.file.display, entry.info.line, note)
                out[qual] = Wrapper(qual, [Delegate(attr, types, False, (*res.steps, held))],
                                    forwards, {m for _, _, m in calls})
                break
        return out

    @staticmethod
    def _implementers(ctx: Context, impls: list[str], member: str, base: str, placeholder: bool):
        """(owner, method) of each implementation's own `member` that does what the wrapper's does not.

        Over a no-op default, a body that acts (another no-op, or a placeholder that raises, loses
        nothing behind the wrapper). Over a placeholder, any body that does not raise
        NotImplementedError too: even a delegate's no-op runs where the wrapper's call raises."""
        index = ctx.index
        for impl in impls:
            found = index.lookup(impl, member)
            if not found or found.owner == base or found.kind != "method":
                continue
            fn = index.classes[found.owner].info.methods[member]
            if fn.unimplemented or (fn.noop and not placeholder
                                    and not _answers_otherwise(ctx, base, found.owner, member)):
                continue
            yield found.owner, fn

    @staticmethod
    def _sites(ctx: Context, wq: str, member: str) -> Iterable[ReachedSite]:
        uses = [Use(s, p.receiver, p.line, p.col, "probe", (s, p.line, "probe", p.receiver))
                for s, p in ctx.probes.get(member, ())]
        uses += [Use(s, target[0], c.line, c.col, "call", (s, c.line, "call", target[0]))
                 for s, c, target in ctx.member_calls.get(member, ())]
        for (site, line, kind, recv), res, static in ctx.reaching(wq, uses):
            yield ReachedSite(site, line, kind, res, static, recv)

    def _report(self, ctx, wq, entry, wrapper, member, gap: Gap) -> Finding:
        index = ctx.index
        base, base_fn, overriders, sites = gap.base, gap.base_fn, gap.overriders, gap.sites
        w = entry.info.name
        be = index.classes[base]
        evidence: list[Evidence] = []
        for n, s in enumerate(sites[:5]):
            verb = "probed" if s.kind == "probe" else "called"
            link = [Evidence(s.site.path, s.line, f"`{member}` is {verb} in `{s.site.where}` on a "
                                                  f"receiver of type `{short(s.static)}`, which can be `{w}`"),
                    *shortened(s.resolution.steps, 2)]
            # One site proves the claim; the others support it (shown with --verbose).
            evidence.extend(link if n == 0 else [replace(e, supporting=True) for e in link])
        placeholder = base_fn.unimplemented
        own = base == wq
        if own:
            default = (f"`{w}.{member}` only raises NotImplementedError: it overrides the family's "
                       f"`{member}` with a placeholder")
        elif placeholder:
            default = (f"`{be.info.name}.{member}` only raises NotImplementedError (a placeholder), "
                       f"inherited by `{w}`")
        else:
            default = f"`{be.info.name}.{member}` is a no-op default, inherited by `{w}`"
        evidence.append(Evidence(be.file.display, base_fn.line, default))
        getattr_owner = index.has_getattr_hook(wq)
        if getattr_owner:
            evidence.append(Evidence(entry.file.display, entry.info.line,
                                     f"`{w}` has `__getattr__`, but it is never consulted for `{member}`: "
                                     f"`{be.info.name}` defines it"))
        holding = delegates_named_in_evidence(ctx, wq, wrapper, member, overriders)
        for d in wrapper.delegates:
            evidence.extend(e if d.attr in holding or e.supporting else replace(e, supporting=True)
                            for e in tail(d.evidence, 1))
        for n, owner in enumerate(overriders):  # the three the message names prove it; the others support it
            oe = index.classes[owner]
            fn = oe.info.methods[member]
            if not placeholder and fn.noop:
                got = _constant_answer(ctx, owner, member)
                note = (f"`{oe.info.name}` overrides `{member}` to answer `{got.value!r}`" if got is not None
                        else f"`{oe.info.name}` overrides `{member}`")
            elif not placeholder:
                note = f"`{oe.info.name}` overrides `{member}` with a real body"
            elif fn.noop:
                note = f"`{oe.info.name}` implements `{member}` as a no-op: the call returns where the wrapper's raises"
            else:
                note = f"`{oe.info.name}` implements `{member}`"
            evidence.append(Evidence(oe.file.display, fn.line, note, supporting=n >= 3))
        names = ", ".join(f"`{short(o)}`" for o in overriders[:3]) + (" and more" if len(overriders) > 3 else "")
        one = len(overriders) == 1
        answer = None
        if not placeholder and not own and all(index.classes[o].info.methods[member].noop for o in overriders):
            got = _constant_answer(ctx, base, member)
            answer = got.value if got is not None else None
        # An `async def` placeholder raises only once awaited; a call nobody awaits does nothing.
        raises = ("raises NotImplementedError once awaited (and does nothing where it is not awaited)"
                  if base_fn.is_async else "raises NotImplementedError")
        if placeholder:
            what = (f"overrides `{member}` with a placeholder" if own
                    else f"inherits the placeholder `{be.info.name}.{member}`")
            message = (f"`{w}` {what}; {names}, which its delegates can be, {'implements' if one else 'implement'} "
                       f"it, but on the wrapper the call {raises} where the delegate's `{member}` would run")
        elif answer is not None:
            message = (f"`{w}` inherits `{be.info.name}.{member}`, which answers `{answer!r}`; {names}, which its "
                       f"delegates can be, {'answers' if one else 'answer'} otherwise, but on the wrapper the "
                       f"call gets the base's answer where the delegate's would apply")
        else:
            message = (f"`{w}` inherits the no-op `{be.info.name}.{member}`; {names}, which its delegates can "
                       f"be, {'overrides' if one else 'override'} it, but on the wrapper the hook silently "
                       f"does nothing")
        facts = NoopDefaultFacts(base=base, default="placeholder" if placeholder else "constant"
                                 if answer is not None else "noop", delegates=tuple(d.attr for d in wrapper.delegates),
                                 site=f"{sites[0].site.path}:{sites[0].line}", site_kind=sites[0].kind)
        return self.finding(path=entry.file.display, line=entry.info.line, column=entry.info.col + 1,
                            message=message, class_name=wq, member=member, targets=overriders,
                            evidence=evidence, facts=facts)


class ReachedSite(NamedTuple):
    """A probe or call of the member whose receiver can be the wrapper."""
    site: Site
    line: int
    kind: str  # "probe" or "call"
    resolution: Resolution  # what the receiver can be, with the steps that say so
    static: str  # the receiver's static type (a family base)
    receiver: tuple | None


class Gap(NamedTuple):
    """A wrapper's inherited default (or placeholder) for a member implementations override."""
    base: str  # the class whose default the wrapper inherits
    base_fn: FunctionInfo
    overriders: list[str]  # the implementations' classes that override it
    sites: list[ReachedSite]
    holders: list[str]  # the implementations the wrapper's delegates can hold that inherit an override


def _answers_otherwise(ctx: Context, base: str, owner: str, member: str) -> bool:
    """Both the base's `member` and the override only `return` a constant, and not the same one
    (nor two false ones): `supports_x()` answering False on the base and True on the
    implementation, or a tile size of 64 and 128, is behaviour."""
    a, b = _constant_answer(ctx, base, member), _constant_answer(ctx, owner, member)
    # Two false answers (`False`, `None`, `0`) decide every test of them alike.
    return a is not None and b is not None and a != b and bool(a[0]) | bool(b[0])


def _constant_answer(ctx: Context, owner: str, member: str) -> Constant | None:
    """Constant(value) where `owner`'s own `member` is a method whose body (after a docstring) is only
    `return <literal>`; None otherwise. Read from the method's text, once per method and run."""
    memo = ctx.state(_constant_answer, dict)
    key = (owner, member)
    if key not in memo:
        memo[key] = _read_constant_answer(ctx, owner, member)
    return memo[key]


def _read_constant_answer(ctx: Context, owner: str, member: str) -> Constant | None:
    entry = ctx.index.classes[owner]
    fn = entry.info.methods.get(member)
    if fn is None or not fn.noop or fn.kind == "property":
        return None
    return ctx.tree.text.constant_return(Scope(entry.module, owner, fn))
