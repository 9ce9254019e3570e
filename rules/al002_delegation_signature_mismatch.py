"""AL002 delegation-signature-mismatch: a call through a delegate that some implementation cannot bind."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable

from ..linter.confidence import Pairing
from ..linter.findings import Evidence, Finding
from ..linter.signature import CallShape, bind_error, bound_params, format_signature
from .base import Example, Rule, assessed, short

if TYPE_CHECKING:
    from ..linter.context import Context

_BACKENDS = '''
class Backend:
    def forward(self, batch):
        raise NotImplementedError

class FlashBackend(Backend):
    def forward(self, batch):
        return batch

    def plan_chunks(self, batch, disable_ragged: bool = False):
        self.planned = batch

class TrtBackend(FlashBackend):
    def plan_chunks(self, batch):
        super().plan_chunks(batch, disable_ragged=True)
'''


class DelegationSignatureMismatch(Rule):
    code = "AL002"
    name = "delegation-signature-mismatch"
    severity = "error"
    summary = "A call through a delegate passes arguments that some reachable implementation cannot bind."
    doc = """\
## What it finds
A call that reaches a family member's method as an optional hook or through a delegate
(`self.full_attn_backend.H(a, b)` in a wrapper, `fn = getattr(self.full_attn_backend, "H", None)`
then `fn(a, b)`, `x.H(a, b)` guarded by `hasattr(x, "H")`, or a base class calling `self.H(...)`
that only its subclasses define), where the receiver's static type (a family base) does not
declare `H`, and whose arguments the signature of some reachable
implementation cannot bind under Python's rules: positional-only and keyword-only parameters, defaults, `*args`,
`**kwargs`, `staticmethod` and `classmethod`. Every rejecting implementation is listed (subclasses
that inherit the method count) with the TypeError Python would raise. Calls with `*args` or
`**kwargs` of unknown length are reported only where they are provably wrong.

## Why it is bad
The wrapper was written and tested against one implementation; another one that the same
attribute can hold takes a different signature. The TypeError waits for the first deployment that
combines them (in SGLang: every TRT-LLM MLA hybrid model).

## Example
```python
class TrtBackend(FlashBackend):
    def plan_chunks(self, batch):              # one argument
        ...

class HybridBackend(Backend):
    def plan_chunks(self, batch, disable_ragged=False):
        hook = getattr(self.full_attn_backend, "plan_chunks", None)
        if hook is not None:
            hook(batch, disable_ragged)       # TypeError for TrtBackend
```

## How to fix
Pass only what every implementation accepts, or widen the narrow implementations to the family's
signature (`def plan_chunks(self, batch, disable_ragged: bool = False)`), so that the base class
states the contract once.
"""

    INVALID = [
        Example({"serving/backends.py": _BACKENDS + '''
class HybridBackend(Backend):
    def __init__(self, full_attn_backend: Backend):
        self.full_attn_backend = full_attn_backend

    def forward(self, batch):
        return self.full_attn_backend.forward(batch)

    def plan_chunks(self, batch, disable_ragged: bool = False):
        hook = getattr(self.full_attn_backend, "plan_chunks", None)
        if hook is not None:
            hook(batch, disable_ragged)
'''}, expect=(("HybridBackend", "plan_chunks"),)),
        Example({"serving/backends.py": _BACKENDS + '''
class Runner:
    def __init__(self, backend: Backend):
        self.backend = backend

    def step(self, batch):
        if hasattr(self.backend, "plan_chunks"):
            self.backend.plan_chunks(batch, disable_ragged=True)
'''}, expect=(("Runner", "plan_chunks"),)),
    ]
    VALID = [
        Example({"serving/backends.py": _BACKENDS + '''
class HybridBackend(Backend):
    def __init__(self, full_attn_backend: Backend):
        self.full_attn_backend = full_attn_backend

    def forward(self, batch):
        return self.full_attn_backend.forward(batch)

    def plan_chunks(self, batch):
        hook = getattr(self.full_attn_backend, "plan_chunks", None)
        if hook is not None:
            hook(batch)
'''}),
        # *args of unknown length: not provably wrong.
        Example({"serving/backends.py": _BACKENDS + '''
class Runner:
    def __init__(self, backend: Backend):
        self.backend = backend

    def step(self, *args):
        self.backend.plan_chunks(*args)
'''}),
    ]

    def check(self, ctx: Context) -> Iterable[Finding]:
        """Calls that treat `member` as optional or delegated, so that their target varies by
        design: through `getattr(obj, "m", None)`, guarded by a probe of the same member on the
        same receiver in the same function, a base class calling on `self` a member only its
        subclasses define (these three are `ctx.optional_candidates`), or a wrapper forwarding to
        its own delegate. An unguarded call of an undeclared member on a base-typed receiver is an
        attribute error waiting for any implementation that lacks it, which type checkers report.
        """
        index, model = ctx.index, ctx.model
        candidates = list(ctx.optional_candidates)
        for wq in model.wrappers:
            candidates.extend(c for c in ctx.self_attr_calls.get(wq, ())
                              if model.reads_own_delegate(wq, c[0].fn, c[2][0]))
        for site, call, (recv, member, how) in sorted(candidates, key=lambda c: c[2][1]):
            res = ctx.receiver_types(site, recv)
            # A member the static type declares (own or inherited) has a contract that type
            # checkers already hold calls to; implementations that break it are an override
            # problem. This rule is about what no checker sees: undeclared members (optional
            # hooks, implementation-specific methods reached through a probe or a delegate),
            # where every reachable implementation must bind.
            statics = sorted(t for t in res.instances() if t in model.family_members and
                             model.is_polymorphic(t) and index.lookup(t, member) is None)
            if not statics:
                continue
            shape = CallShape.of(call)
            rejecting, accepting = [], []
            for impl in model.implementations(set(statics)):
                found = index.method(impl, member)
                if found is None:
                    continue
                owner, fn = found
                if fn.kind == "property":
                    rejecting = []
                    break
                owner_name = index.classes[owner].info.name
                err = bind_error(bound_params(fn), shape, f"{owner_name}.{member}",
                                 implicit=0 if fn.kind == "staticmethod" else 1)
                (rejecting if err else accepting).append((impl, owner, fn, err))
            if rejecting:
                finding = self._report(ctx, site, call, shape, member, how, res, statics, rejecting, accepting)
                # The class the call sits in holds the receiver (its delegate, or `self`).
                yield assessed(ctx, finding, [Pairing(self.code, site.cls, impl, member, site, call.line, "call", recv)
                                              for impl, _, _, _ in rejecting])

    def _report(self, ctx, site, call, shape, member, how, res, statics, rejecting, accepting) -> Finding:
        index = ctx.index
        call_text = (f"`{member}` through `getattr`" if how == "getattr" else f"`.{member}(...)`")
        evidence: list[Evidence] = [Evidence(site.path, call.line,
                                             f"{call_text} in `{site.where}` passes {shape.describe()}; the "
                                             f"receiver is `{', '.join(short(s) for s in statics)}` "
                                             f"(resolved by {res.via})")]
        evidence.extend(res.steps[:4])
        by_owner: dict[str, list] = {}
        for impl, owner, fn, err in rejecting:
            by_owner.setdefault(owner, []).append((impl, fn, err))
        for owner, group in by_owner.items():
            oe = index.classes[owner]
            _, fn, err = group[0]
            heirs = sorted(short(impl) for impl, _, _ in group if impl != owner)
            inherited = f" (also reached through {', '.join(f'`{h}`' for h in heirs)})" if heirs else ""
            evidence.append(Evidence(oe.file.display, fn.line,
                                     f"`{oe.info.name}.{format_signature(fn)}`{inherited} rejects it: "
                                     f"TypeError: {err}"))
        owners_ok = sorted({owner for _, owner, _, _ in accepting})
        if owners_ok:
            oe = index.classes[owners_ok[0]]
            fn = oe.info.methods[member]
            more = f" and {len(owners_ok) - 1} more" if len(owners_ok) > 1 else ""
            evidence.append(Evidence(oe.file.display, fn.line,
                                     f"`{oe.info.name}.{format_signature(fn)}` accepts it{more}"))
        first = rejecting[0]
        n = len(rejecting)
        message = (f"{call_text} can reach {n} implementation{'s' if n != 1 else ''} that cannot bind "
                   f"this call, e.g. `{short(first[0])}`: TypeError: {first[3]}")
        details = (("call", f"{site.path}:{call.line}"), ("how", how),
                   ("rejecting_owner", first[1]), ("error", first[3] or ""))
        return self.finding(path=site.path, line=call.line, column=call.col + 1, message=message,
                            class_name=site.cls or site.module, member=member,
                            targets=sorted({impl for impl, _, _, _ in rejecting}), evidence=evidence,
                            details=details)

