"""AL001 unforwarded-hook: a wrapper hides an optional hook that its delegates implement."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from ..linter.findings import Evidence, Facts, Finding, shortened, tail
from ..linter.model.confidence import Pairing
from ..linter.model.uses import Use
from ..linter.refs import is_attr, is_self
from .base import Example, Reach, Rule, RuntimeCheck, delegate_pairings, delegates_named_in_evidence, short

if TYPE_CHECKING:
    from ..linter.model.context import Context

_BASE = '''
class Backend:
    def forward(self, batch):
        raise NotImplementedError

class FlashBackend(Backend):
    def forward(self, batch):
        return batch

    def plan_chunks(self, batch):
        self.planned = batch
'''



@dataclass(frozen=True)
class HiddenHookFacts(Facts):
    """What an AL001 finding passes on to `--verify` (runtime_check/scenarios.py replays it)."""

    probe: str | None = None  # `path:line` of the first probe site
    probe_kind: str | None = None  # how it probes: hasattr, getattr-default, try-except
    delegates: tuple[str, ...] | None = None  # the wrapper's delegate attributes
    owners: tuple[str, ...] | None = None  # the implementations that define the hook
    hook_kind: str | None = None  # "method", or "data" for an attribute or property

class UnforwardedHook(Rule):
    code = "AL001"
    name = "unforwarded-hook"
    severity = "error"
    site_kinds = ("probe",)
    # declared-refusal is about a wrapper's own placeholder running instead of the delegate's
    # hook; here the wrapper has no such member at all.
    skipped_signals = frozenset({"declared-refusal"})
    fixable = True
    facts = HiddenHookFacts
    runtime_check = RuntimeCheck(
        "attribute-hidden",
        "static fact reproduced on the real classes (the probe misses the hook); pairing not shown",
        gpu_replay=True)

    def verification_pairings(self, ctx: Context, finding: Finding, facts: dict) -> list[tuple] | str:
        """The wrapper around each implementation that defines the hook it hides."""
        owners = set(HiddenHookFacts.of(finding).owners or ()) or set(finding.targets)
        return delegate_pairings(ctx, finding, lambda owner: owner in owners)

    def fix_method(self, ctx: Context, finding: Finding, sources, indent: str) -> str:
        """Forward the hook to each delegate that can hold an implementation of it
        (linter/model/forwarder.py: the signature every implementation accepts)."""
        from ..linter.model.forwarder import forwarding_method
        return forwarding_method(ctx, finding, sources, indent)
    summary = "A wrapper backend neither defines nor forwards a hook that callers probe and its delegates implement."
    doc = """\
## What it finds
A *wrapper* in a class family (a class that holds other members of its family and forwards calls
to them, like a hybrid attention backend holding `full_attn_backend`) that neither defines nor
inherits hook `H` and has no `__getattr__`, while an implementation its delegate can be defines
`H`, and somewhere in the tree `H` is probed (`hasattr(x, "H")`, `getattr(x, "H", default)`,
`try: x.H except AttributeError`) on a receiver that can be the wrapper.
The implementation can itself be a wrapper where a construction the tree shows puts it inside
(`Split(Hybrid(...))`, or `Hybrid(inner)` probing `inner` in its `__init__` for `Hybrid(Split(...))`),
provided it does more with `H` than hand it to delegates that never have it.
A wrapper that inherits the gap from a wrapper base is not reported again: the finding is on
the outermost wrapper that has it.

## Why it is bad
The probe answers for the wrapper, not for the backend inside it. For every deployment that uses
the wrapper the probe is False, the delegate's hook silently never runs, and whatever it was meant
to prepare is stale. In SGLang this left FlashInfer's ragged prefill planned for another batch:
`ValueError: q.shape[0] (8218) does not match qo_indptr[-1] (800)`.

## Example
```python
class HybridBackend(Backend):
    def __init__(self, full_attn_backend: Backend):
        self.full_attn_backend = full_attn_backend

    def forward(self, batch):
        return self.full_attn_backend.forward(batch)

# elsewhere
if hasattr(forward_batch.attn_backend, "plan_chunks"):   # False for HybridBackend
    forward_batch.attn_backend.plan_chunks(forward_batch)
```

## How to fix
Forward the hook from the wrapper, keeping the probe's meaning for delegates that lack it:
```python
    def plan_chunks(self, batch):
        hook = getattr(self.full_attn_backend, "plan_chunks", None)
        if hook is not None:
            hook(batch)
```
Pass only the arguments every implementation accepts (AL002 checks this), or forward with
`__getattr__` when the wrapper should expose every delegate hook. `attn-lint --fix` writes the
forwarding method.

## Not reported
A leaf backend without the hook; a wrapper with `__getattr__`; a hook the wrapper inherits from
any base or mixin; probes in code that unwraps wrappers (`b = b.full_attn_backend` in a loop),
probes of wrapper structure (another wrapper's delegate attribute names), a probe of `self`
in a method the wrapper overrides, and state rather than hooks: a member every implementation
assigns only after construction (in methods other than `__init__` and those `__init__` calls on
`self`, never in its class body) that is private (`_lora_context`), or that the wrapper gets the
same way because it has those setters too.
"""

    INVALID = [
        Example({"serving/backends.py": _BASE + '''
class HybridBackend(Backend):
    def __init__(self, full_attn_backend: Backend):
        self.full_attn_backend = full_attn_backend

    def forward(self, batch):
        return self.full_attn_backend.forward(batch)
''', "serving/model.py": '''
from serving.backends import Backend

def prefill(backend: Backend, batch):
    if hasattr(backend, "plan_chunks"):
        backend.plan_chunks(batch)
    return backend.forward(batch)
'''}, expect=(("HybridBackend", "plan_chunks"),)),
    ]
    VALID = [
        # The wrapper forwards the hook.
        Example({"serving/backends.py": _BASE + '''
class HybridBackend(Backend):
    def __init__(self, full_attn_backend: Backend):
        self.full_attn_backend = full_attn_backend

    def forward(self, batch):
        return self.full_attn_backend.forward(batch)

    def plan_chunks(self, batch):
        hook = getattr(self.full_attn_backend, "plan_chunks", None)
        if hook is not None:
            hook(batch)
''', "serving/model.py": '''
from serving.backends import Backend

def prefill(backend: Backend, batch):
    if hasattr(backend, "plan_chunks"):
        backend.plan_chunks(batch)
'''}, reaches=Reach("HybridBackend", "plan_chunks")),
        # A leaf backend lacking an optional hook is what probes are for.
        Example({"serving/backends.py": _BASE + '''
class TritonBackend(Backend):
    def forward(self, batch):
        return batch
''', "serving/model.py": '''
from serving.backends import Backend

def prefill(backend: Backend, batch):
    if hasattr(backend, "plan_chunks"):
        backend.plan_chunks(batch)
'''}, reaches=Reach("TritonBackend", "plan_chunks", wrapper=False)),
        # __getattr__ forwards every hook the delegate has.
        Example({"serving/backends.py": _BASE + '''
class TwoBatchBackend(Backend):
    def __init__(self, primary: Backend):
        self.primary = primary

    def forward(self, batch):
        return self.primary.forward(batch)

    def __getattr__(self, name):
        return getattr(self.primary, name)
''', "serving/model.py": '''
from serving.backends import Backend

def prefill(backend: Backend, batch):
    if hasattr(backend, "plan_chunks"):
        backend.plan_chunks(batch)
'''}, reaches=Reach("TwoBatchBackend", "plan_chunks")),
    ]

    def check(self, ctx: Context) -> Iterable[Finding]:
        index, model = ctx.index, ctx.model
        found: dict[tuple[str, str], tuple] = {}
        for wq, wrapper in sorted(model.wrappers.items()):
            if index.has_getattr_hook(wq) or index.opaque_bases(wq):
                continue  # dynamic forwarding, or members we cannot see: no claim
            impls = model.implementations(wrapper.delegate_types(), exclude=wq,
                                         exact=wrapper.exact_types())
            provided = model.members_provided(impls)
            for member in sorted(provided.keys() & ctx.probes.keys() - model.structural_members):
                if member.startswith("__") or index.lookup(wq, member) is not None \
                        or _state_set_later(index, wq, member, provided[member]):
                    continue
                uses = [Use(site, p.receiver, p.line, p.col, "probe", (site, p)) for site, p in ctx.probes[member]]
                hits = [(site, probe, res, static) for (site, probe), res, static in ctx.reaching(wq, uses)]
                if hits:
                    found[(wq, member)] = (sorted(provided[member]), hits, impls)
        for wq, member in model.outermost(found):
            owners, hits, impls = found[(wq, member)]
            finding = self._report(ctx, wq, index.classes[wq], model.wrappers[wq], member, owners, hits)
            owned = set(owners)
            holders = [i for i in impls if index.owner_of(i, member) in owned]
            yield self.assessed(ctx, finding, [
                Pairing(self.code, wq, impl, member, site, probe.line, "probe", probe.receiver)
                for site, probe, _, _ in hits for impl in holders])

    def _report(self, ctx, wq, entry, wrapper, member, owners, hits) -> Finding:
        w = entry.info.name
        # The chain that proves the claim: one probe site and how its receiver can be the wrapper,
        # the wrapper, for each implementation that defines the hook the most specific delegate
        # that can hold it, and the definitions. Other sites, the other delegates and how they
        # were found support it (shown with --verbose).
        evidence: list[Evidence] = []
        for n, (site, probe, res, static) in enumerate(hits[:5]):
            link = [Evidence(site.path, probe.line,
                             f"{_probe_text(probe)} in `{site.where}`: the receiver is `{short(static)}`"
                             f" (resolved by {res.via}), which can be `{w}`"), *shortened(res.steps, 3)]
            evidence.extend(link if n == 0 else [replace(e, supporting=True) for e in link])
        if len(hits) > 5:
            evidence.append(Evidence(hits[5][0].path, hits[5][1].line, f"and {len(hits) - 5} more probe sites",
                                     supporting=True))
        evidence.append(Evidence(entry.file.display, entry.info.line,
                                 f"`{w}` is a wrapper: it neither defines nor inherits `{member}` "
                                 f"and has no `__getattr__`"))
        holding = delegates_named_in_evidence(ctx, wq, wrapper, member, owners)
        for d in wrapper.delegates:
            last = d.evidence[-1:] if d.attr in holding else ()
            evidence.extend(replace(e, supporting=True) for e in tail(d.evidence, 2) if e not in last)
            evidence.extend(last)
        evidence.extend(replace(e, supporting=True) for e in wrapper.forwards[:1])
        for n, owner in enumerate(owners):  # the three the message names prove it; the others support it
            oe = ctx.index.classes[owner]
            line = _member_line(oe.info, member)
            evidence.append(Evidence(oe.file.display, line, f"`{oe.info.name}` defines `{member}`", supporting=n >= 3))
        first = hits[0]
        names = ", ".join(f"`{short(o)}`" for o in owners[:3]) + (f" and {len(owners) - 3} more"
                                                                   if len(owners) > 3 else "")
        kinds = {ctx.index.lookup(o, member).kind for o in owners}
        what = "method" if "method" in kinds else "property" if "property" in kinds else "attribute"
        consequence = "the hook never runs" if what == "method" else "the delegate's value is never used"
        message = (f"`{w}` hides {what} `{member}`: its delegates ({names}) define it, but "
                   f"{_probe_text(first[1])} at {first[0].path}:{first[1].line} {_outcome(first[1])} "
                   f"for the wrapper, so {consequence}")
        facts = HiddenHookFacts(probe=f"{first[0].path}:{first[1].line}", probe_kind=first[1].kind,
                                delegates=tuple(d.attr for d in wrapper.delegates), owners=tuple(owners),
                                hook_kind="method" if "method" in kinds else "data")
        finding = self.finding(path=entry.file.display, line=entry.info.line, column=entry.info.col + 1,
                               message=message, class_name=wq, member=member, targets=owners, evidence=evidence,
                               facts=facts)
        if "method" not in kinds:
            # A hidden data attribute makes the probe fall back to its default rather than skip
            # behaviour: still drift, reported one level lower.
            finding = replace(finding, severity="warning")
        return finding


def _state_set_later(index, wq: str, member: str, owners) -> bool:
    """`member` is state the objects are given after construction, not a hook their classes have:
    every owner assigns `self.<member>` only in methods other than `__init__` (and the methods
    `__init__` calls on `self`), never in a class body. Whether an object has it then depends on
    whether such a setter ran on that object: a private field (`_lora_context`) is the object's
    own business, and a public one the wrapper gets the same way wherever it has those setters."""
    setters: set[str] = set()
    for owner in owners:
        info = index.classes[owner].info
        if member in info.attrs or member in info.methods:
            return False
        init = info.methods.get("__init__")
        at_construction = {"__init__"} | _self_calls(init)
        for method, _ in index.assignments(owner).get(member, ()):
            if method.name in at_construction:
                return False
            setters.add(method.name)
    if not setters:
        return False
    if member.startswith("_"):
        return True
    return all(index.lookup(wq, name) is not None for name in setters)


def _self_calls(fn) -> set[str]:
    """Names of the methods `fn` calls on its own first parameter (`self.setup()`)."""
    if fn is None or not fn.params:
        return set()
    return {c.func[2] for c in fn.calls if c.func and is_attr(c.func) and is_self(c.func[1], fn.params[0].name)}


def _probe_text(probe) -> str:
    if probe.kind == "hasattr":
        return f'`hasattr(..., "{probe.member}")`'
    if probe.kind == "getattr-default":
        return f'`getattr(..., "{probe.member}", default)`'
    return f"`.{probe.member}` under `except AttributeError`"


def _outcome(probe) -> str:
    """What the probe does when the wrapper lacks the member."""
    if probe.kind == "hasattr":
        return "is False"
    if probe.kind == "getattr-default":
        return "returns the default"
    return "raises AttributeError"


def _member_line(info, member: str) -> int:
    if member in info.methods:
        return info.methods[member].line
    if member in info.attrs:
        return info.attrs[member].line
    for fn in info.methods.values():
        if member in fn.self_attrs:
            return fn.self_attrs[member][0][2]
    return info.line
