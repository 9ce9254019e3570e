"""AL002 delegation-signature-mismatch: a call through a delegate that some implementation cannot bind."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from ..linter.findings import Evidence, Facts, Finding, Reason, shortened
from ..linter.model.confidence import Pairing
from ..linter.model.resolve import Resolution
from ..linter.perfile.signature import CallShape, bind_error, bound_params, format_signature
from ..linter.perfile.summary import KEYWORD_ONLY, POSITIONAL_ONLY, POSITIONAL_OR_KEYWORD, VAR_KEYWORD, VAR_POSITIONAL
from ..linter.refs import class_values, is_attr, is_call, is_name, is_self
from .base import Example, Reach, Rule, RuntimeCheck, calls_on_own_attrs, hands_own_operations, short

if TYPE_CHECKING:
    from ..linter.model.context import Context

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


_POOLS = '''
class Pool:
    def copy_out(self, indices, extra_indices=None):
        raise NotImplementedError

class PlainPool(Pool):
    def copy_out(self, indices, extra_indices=None):
        return indices

class SparsePool(Pool):
    def copy_out(self, indices):                  # the base gained `extra_indices`; this one did not
        return indices

class Allocator:
    def __init__(self, pool: Pool):
        self._pool = pool

    def copy_out(self, indices, extra_indices=None):
        return self._pool.copy_out(indices, extra_indices=extra_indices)
'''


ROTARY = '''
class Rotary:
    def __call__(self, x, offsets=None):
        return self.apply(x, offsets)

    def apply(self, x, offsets=None):
        return x


class VisionRotary(Rotary):
    def apply(self, x):                           # the base's call passes `offsets`
        return x


def build(vision):
    return VisionRotary() if vision else Rotary()
'''


KV_SHAPES = '''
class Backend:
    def kv_shape(self, n, size, cache_dtype="auto"):
        raise NotImplementedError
''' + "".join(f'''
class {name}Backend(Backend):
    def kv_shape(self, n, size, cache_dtype="auto"):
        return (n, size)
''' for name in ("Flash", "Triton", "Flex", "Tree")) + '''
class RocmBackend(Backend):
    def kv_shape(self, n, size):                  # the family gained `cache_dtype`; this one did not
        return (n, size)

TABLE = {"flash": FlashBackend, "triton": TritonBackend, "flex": FlexBackend, "tree": TreeBackend,
         "rocm": RocmBackend}

class Runner:
    def __init__(self, name):
        self.backend: Backend = TABLE[name]()

    def allocate(self, n, size, dtype):
        return self.backend.kv_shape(n, size, cache_dtype=dtype)
'''


METHODS = '''
class MethodBase:
    def apply(self, layer, *args, **kwargs):
        raise NotImplementedError

class ExpertsMethod(MethodBase):
    def apply(self, layer, x, router_logits):     # the layer passes `scoring_func` too
        return x

class Config:
    def method_for(self, layer):
        raise NotImplementedError

class Int4Config(Config):
    def method_for(self, layer):
        if isinstance(layer, Experts):
            return ExpertsMethod()
        return None

class Experts:
    def __init__(self, config: Config):
        self.method = config.method_for(self)

    def forward(self, x, logits):
        return self.method.apply(self, x, logits, scoring_func="sigmoid")

CONFIGS = {"int4": Int4Config}
'''



@dataclass(frozen=True)
class CallFacts(Facts):
    """What an AL002 finding passes on: to `--verify` (runtime_check/scenarios.py replays the call),
    to its identity (the caller) and to the rule itself (one finding per call)."""

    call: str | None = None  # `path:line` of the call
    how: str | None = None  # "call", or "getattr" for `getattr(x, "m")(...)`
    rejecting_owner: str | None = None  # the class whose method cannot bind the call
    error: str | None = None  # the TypeError Python would raise
    caller: str | None = None  # the calling function, qualified
    variant: str | None = None  # "override-drops-parameter" or "factory-built", where it is one of those
    odd_ones_out: bool = False  # the overrides that reject the call are few in a family that accepts it
    # An override narrower than the API it forwards (no call site): the class declaring that API,
    # and the parameters the override drops.
    narrowed_from: str | None = None
    dropped: tuple[str, ...] | None = None

class DelegationSignatureMismatch(Rule):
    code = "AL002"
    name = "delegation-signature-mismatch"
    severity = "error"
    site_kinds = ("call",)
    subject_is_wrapper = False  # the calling class: a wrapper, or any class holding a family member
    # A rejected call fails whatever the rejecting method's body does (check-only), and the
    # receiver is what the call reaches, not a wrapper's delegate (declared-refusal,
    # unknown-delegate are about what a wrapper holds and runs in its place). A call's own positive
    # evidence is the call being made on the implementation (self-call): the rule reads `medium` as
    # "no such evidence" and lowers or keeps such findings by its own checks, which a chain of
    # constructions (built-chain) does not answer.
    skipped_signals = frozenset({"check-only", "declared-refusal", "unknown-delegate", "built-chain"})
    facts = CallFacts
    runtime_check = RuntimeCheck(
        "call-rejected",
        "static fact reproduced: the real signature refuses the call (Python's TypeError); pairing not shown",
        gpu_replay=True)

    def verification_pairings(self, ctx: Context, finding: Finding, facts: dict) -> list[tuple] | str:
        """The calling class around the rejecting implementation and its subclasses that keep its
        method, when the call's receiver is `self` or an attribute of the class."""
        index = ctx.index
        owner = CallFacts.of(finding).rejecting_owner or (finding.targets[0] if finding.targets else "")
        impls = [owner] + sorted(c for c in index.descendants(owner)
                                 if index.owner_of(c, finding.member) == owner)
        if facts.get("on_self"):
            return [(finding.class_name, None, impls)]
        if facts.get("receiver_attr"):
            return [(finding.class_name, facts["receiver_attr"], impls)]
        return ("not run: the call's receiver is not an object the class holds (a parameter or a local): "
                "which implementation it is, is decided by the caller")
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

It also finds the same TypeError behind a *declared* member, where type checkers look only at the
declaration: a method `m(self, ..., k=None)` that forwards its own `k` by keyword to the same
method of an object it holds (`self.pool.m(..., k=k)`), whose static type declares `m` with `k`,
while an override some implementation has dropped or renamed `k` (the base gained a parameter; one
override did not). Calls on `self` or `super()`, overrides that are placeholders (`raise
NotImplementedError`) and overrides taking `**kwargs` are left out. Such a finding is in the default
report when the tree builds the overriding class (`Impl(...)`) or hands the class out (a factory or
registry returning it, a table naming it and its module by strings for a lazy import, or its
qualified name spelled as a string for `resolve_obj_by_qualname`-style loading); when it
is only passed into another class's constructor (a component
built there) or used nowhere, it is latent drift (`--show-latent`).

A class's own call on `self` of a member it declares is checked against the overrides of the
subclasses that run that very method (they inherit it): `forward_cpu` calling
`self.forward_native(positions, query, key, offsets)` meets a subclass whose override takes no
`offsets`, on every instance of that subclass. Such a finding is `high` where the tree shows the
calling method run on that subclass (Python calls it itself, a call on `self` in a method it runs,
a call on an attribute built with it, or the bound method handed on from one of those) and builds
one, and the call runs whenever its method does (no test or loop between); otherwise it is latent
drift: a subclass that inherits the method but runs its own entry point instead never makes the call.

And the same TypeError through *method objects*: an object a class holds, built by a factory that
a family of configurations overrides (`self.quant_method = quant_config.get_quant_method(self,
prefix)`). Each override names the class it builds for the asker's kind (`if isinstance(layer,
FusedMoE): return MoEMethod(self)`); a return under a test no class of the asker's lineage passes
is never reached, and one reached only through tests that say nothing of the asker (`if
skipped(prefix):`) is not claimed. Each class so built must bind the calls the holder makes on it
(`self.quant_method.apply(layer=self, ..., scoring_func=...)`), although the member is declared on
their base: one configuration's method that did not gain a parameter raises TypeError on every
layer of every model quantised with it. Such a finding is `high` where the holder is built and the
call runs whenever its method does (no test or loop before it); a call under a test in its method
is latent drift.

And a declared member's override that lost what the rest of its family took: a call binding the
declaration (`backend.kv_shape(n, size, heads, dim, cache_dtype=x)` against `Backend.kv_shape(self,
n, size, heads, dim, cache_dtype="auto")`) meets an override, among at least five, that is its
nearest base's signature less a parameter or two, while at least four in five of the overrides the
receiver can reach take the call. Every run that installs that class raises TypeError there; a
static or class method called on the class object itself (`group.backend.kv_shape(...)` with
`backend: type[Backend]`) counts the same. An
override of another shape altogether, one agreeing with a base of its own branch that re-declares
the method, or a family where many overrides differ is the caller's contract, not drift; an
override nothing in the tree builds or hands out is latent.

And the same drift on the wrapper's side, with no call in the tree: a wrapper's own override of a
method it forwards to its delegates, narrower than the class that declares that method for it and
for them (`def enable_offload(self, gpu_id=0)` handing the call to its sub-pipelines, while the base
they share takes `(gpu_id=None, device="cuda")`). A call through the base's API passing `device`
raises TypeError on the wrapper alone. A parameter renamed in place (positional callers still
bind) or an override taking `**kwargs` is not reported.

A *facade* is checked the same way: a class that builds its held object from classes it names
(`self.model = SentencePieceTokenizer(f)` in one branch, `HuggingFaceTokenizer(f)` in another,
whether they share a base or not) and hands at least two of its own operations to it by name; each
call it makes on that object must bind every one of those classes.

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
states the contract once. For an override that dropped a parameter its base declares, give it the
base's signature (`def copy_out(self, indices, extra_indices=None)`).
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
        Example({"serving/pools.py": _POOLS + '''
def build(n):
    return Allocator(SparsePool()) if n else Allocator(PlainPool())
'''}, expect=(("Allocator", "copy_out"),)),
        Example({"serving/rotary.py": ROTARY}, expect=(("Rotary", "apply"),)),
        Example({"serving/methods.py": METHODS}, expect=(("Experts", "apply"),)),
        Example({"serving/shapes.py": KV_SHAPES}, expect=(("Runner", "kv_shape"),)),
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
'''}, reaches=Reach("HybridBackend", "plan_chunks")),
        # *args of unknown length: not provably wrong.
        Example({"serving/backends.py": _BACKENDS + '''
class Runner:
    def __init__(self, backend: Backend):
        self.backend = backend

    def step(self, *args):
        self.backend.plan_chunks(*args)
'''}, reaches=Reach("Runner", "plan_chunks", wrapper=False)),
    ]

    VALID += [
        # The override keeps the base's signature.
        Example({"serving/pools.py": _POOLS.replace("def copy_out(self, indices):",
                                                    "def copy_out(self, indices, extra_indices=None):")},
                reaches=Reach("Allocator", "copy_out", wrapper=False)),
        # Not forwarded from the caller's own parameter: the call passes what every override takes.
        Example({"serving/pools.py": _POOLS.replace("self._pool.copy_out(indices, extra_indices=extra_indices)",
                                                    "self._pool.copy_out(indices)")},
                reaches=Reach("Allocator", "copy_out", wrapper=False)),
        # The subclass runs its own `__call__`: the base's call of `apply` never meets its override.
        Example({"serving/rotary.py": ROTARY.replace(
            "class VisionRotary(Rotary):\n", "class VisionRotary(Rotary):\n    def __call__(self, x, offsets=None):\n"
            "        return self.apply(x)\n\n")}, reaches=Reach("Rotary", "apply", wrapper=False)),
        # The method a configuration builds for this kind of layer takes what the layer passes.
        Example({"serving/methods.py": METHODS.replace("def apply(self, layer, x, router_logits):",
                                                       "def apply(self, layer, x, router_logits, scoring_func=None):")},
                reaches=Reach("Experts", "apply", wrapper=False)),
        # The odd one out took the family's new parameter.
        Example({"serving/shapes.py": KV_SHAPES.replace("def kv_shape(self, n, size):",
                                                        "def kv_shape(self, n, size, cache_dtype=None):")},
                reaches=Reach("Runner", "kv_shape", wrapper=False)),
        # The override is a placeholder: it fails with or without the parameter.
        Example({"serving/pools.py": _POOLS.replace(
            "def copy_out(self, indices):                  # the base gained `extra_indices`; this one did not\n"
            "        return indices", "def copy_out(self, indices):\n        raise NotImplementedError")},
                reaches=Reach("Allocator", "copy_out", wrapper=False)),
    ]

    def reaches(self, ctx, qual: str, member: str) -> bool:
        """A call of `member` the rule examines is made in `qual`'s own code: the finding would be
        about the calling class, whatever its receiver holds."""
        calls = [*ctx.optional_candidates, *ctx.self_attr_calls.get(qual, ()), *ctx.member_calls.get(member, ())]
        return any(site.cls == qual and target[1] == member for site, _, target in calls)

    def identity_subject(self, finding, ctx):
        """A call's finding is about the calling function and the family it calls into (its
        targets' roots); an override narrower than its API is about the wrapper."""
        from ..linter.model.identity import family_roots
        caller = CallFacts.of(finding).caller
        if caller is None:
            return super().identity_subject(finding, ctx)
        return caller, family_roots(ctx, finding.targets)

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
            # A class calling what it holds meets only what that is built with.
            held = model.classes_read_from_own_attrs(site.cls, site.fn, recv)
            for impl in model.implementations(set(statics)):
                if held is not None and impl not in held:
                    continue
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
                yield self.assessed(ctx, finding, [
                    Pairing(self.code, site.cls, impl, member, site, call.line, "call", recv)
                    for impl, _, _, _ in rejecting])
        dropped = list(self._dropped_parameters(ctx))
        yield from dropped
        own = list(self._own_calls_narrowed(ctx))
        yield from own
        shown = {(t, f.member) for f in own for t in f.targets}
        yield from (f for f in self._narrowed_forwards(ctx)
                    if (f.class_name, f.member) not in shown)  # the call that breaks it says more
        yield from self._facade_calls(ctx)
        checked = {CallFacts.of(f).call for f in dropped}
        built = [f for f in self._factory_built_calls(ctx) if CallFacts.of(f).call not in checked]
        yield from built
        checked |= {CallFacts.of(f).call for f in built}
        yield from (f for f in self._odd_overrides(ctx) if CallFacts.of(f).call not in checked)

    def _odd_overrides(self, ctx: Context) -> Iterable[Finding]:
        """A call that binds a method's declaration, made on a receiver whose overrides of it
        all take the call but one or two (the odd ones out: the declaration gained a parameter,
        the family followed, these did not). The declaration is what a type checker checks the
        call against; the override is the drift: every call reaching that class raises TypeError
        (a backend's `get_kv_cache_shape(..., cache_dtype_str=)`, a quantisation method's
        `apply_monolithic(..., input_ids=)`). Only where at least four in five overrides take the
        call: a family where many overrides differ is a family whose signatures vary by design,
        and the call is the caller's contract with the ones it is written for."""
        index = ctx.index
        narrow = _narrow_overrides(index)
        for member in sorted(narrow.keys() & ctx.member_calls.keys()):
            for site, call, (recv, _, how) in ctx.member_calls[member]:
                fn = site.fn
                if how != "call" or recv is None or call.star or call.double_star \
                        or (fn.params and _on_self(recv, fn.params[0].name)):
                    continue
                shape = CallShape.of(call)
                if not any(bind_error(bound_params(f), shape, member, implicit=0 if f.kind == "staticmethod" else 1)
                           for _, _, _, lacking in narrow[member] for f in lacking):
                    continue  # every override lacking a name binds it (asked before the receiver: most calls)
                res = ctx.receiver_types(site, recv)
                statics = sorted(t for t in res.instances() if t in index.classes)
                # A static or class method answers the same on the class object (`group.backend`
                # annotated `type[Backend]`) as on an instance.
                class_objects = sorted(q for q in class_values(res.types) if q in index.classes)
                for declaring, decl_fn, overrides, _ in narrow[member]:
                    receivers = sorted({*statics, *class_objects}) if decl_fn.kind != "method" else statics
                    mine = [t for t in receivers if declaring in index.mro(t)]
                    if not mine or bind_error(bound_params(decl_fn), shape, member,
                                              implicit=0 if decl_fn.kind == "staticmethod" else 1):
                        continue
                    reach = set(mine) | {d for t in mine for d in index.descendants(t)}
                    rejecting, accepting = [], []
                    for owner, impl_fn in overrides:
                        if owner not in reach:
                            continue
                        err = bind_error(bound_params(impl_fn), shape, f"{index.classes[owner].info.name}.{member}",
                                         implicit=0 if impl_fn.kind == "staticmethod" else 1)
                        if err and not _drifted(index, owner, member, impl_fn, shape):
                            continue  # its own branch of the family has another contract: not drift
                        (rejecting if err else accepting).append((owner, owner, impl_fn, err))
                    if not rejecting or len(accepting) < 4 * len(rejecting):
                        continue
                    finding = self._report(ctx, site, call, shape, member, how, res, mine, rejecting, accepting,
                                           dropped_from=declaring, odd_ones_out=True)
                    finding = self.assessed(ctx, finding, [Pairing(self.code, site.cls, impl, member, site,
                                                                   call.line, "call", recv)
                                                           for impl, _, _, _ in rejecting])
                    yield _latent_unless_built(ctx, finding, rejecting)
                    break

    def _factory_built_calls(self, ctx: Context) -> Iterable[Finding]:
        """A call on an object the class holds, built by a factory that a family of configurations
        overrides (`self.quant_method = quant_config.get_quant_method(self, prefix)`, then
        `self.quant_method.apply(layer=self, x=x, scoring_func=...)`): each override names the
        class it builds for an asker of this kind (linter/model/factory_returns.py), and each such class
        must bind the call. The member is declared (a placeholder on the method objects' base, often
        `apply(self, layer, *args, **kwargs)`), so a type checker accepts the call; the class one
        configuration builds is what raises TypeError, on every layer it serves."""
        from ..linter.model.factory_returns import held_from_factories
        from ..linter.signals.self_call import built_at, runs_unconditionally

        index = ctx.index
        memo: dict[tuple[str, str], list] = {}
        for member in sorted(ctx.member_calls):
            for site, call, (recv, _, how) in ctx.member_calls[member]:
                if recv is None or not is_attr(recv) or recv[1] is None or not is_name(recv[1]) \
                        or how != "call" or site.cls is None or call.star or call.double_star:
                    continue  # (the receiver's shape first: the cheapest test)
                fn = site.fn
                if not fn.params or recv[1][1] != fn.params[0].name or fn.kind != "method":
                    continue
                key = (site.cls, recv[2])
                if key not in memo:
                    memo[key] = held_from_factories(ctx, site.cls, recv[2], built_at)
                built = memo[key]
                if not built:
                    continue
                shape = CallShape.of(call)
                rejecting, accepting, seen = [], [], set()
                for b in built:
                    found = index.method(b.cls, member)
                    if found is None or b.cls in seen:
                        continue
                    seen.add(b.cls)
                    owner, impl_fn = found
                    if impl_fn.kind not in ("method", "staticmethod", "classmethod") or impl_fn.unimplemented:
                        continue
                    err = bind_error(bound_params(impl_fn), shape, f"{index.classes[owner].info.name}.{member}",
                                     implicit=0 if impl_fn.kind == "staticmethod" else 1)
                    (rejecting if err else accepting).append((b.cls, owner, impl_fn, err))
                if not rejecting:
                    continue
                steps = tuple(b.evidence for b in built if b.cls in {r[0] for r in rejecting})
                res = Resolution(frozenset(b.cls for b in built), steps, via="factory returns")
                finding = self._report(ctx, site, call, shape, member, how, res, [f"self.{recv[2]}"],
                                       rejecting, accepting, variant="factory-built")
                pairings = [Pairing(self.code, site.cls, impl, member, site, call.line, "call", recv)
                            for impl, _, _, _ in rejecting]
                finding = self.assessed(ctx, finding, pairings)
                if finding.confidence != "medium":
                    yield finding
                    continue
                if not runs_unconditionally(ctx, pairings[0]):
                    # A call under a test may be one the class built for this kind never meets
                    # (the data that takes that branch is another configuration's).
                    reason = Reason("factory-built", "lower", site.path, call.line,
                                    f"the call runs only where a test in `{site.where}` holds: the classes the "
                                    f"factory builds for this kind may never take that branch")
                    finding = _restated(finding, "low", reason)
                elif (holder := built_at(ctx, site.cls)) is not None:
                    # The holder is built, its factory names the class for its kind, and the call
                    # runs whenever its method does: the pairing and the call are the code's own.
                    where = holder[2]
                    first = next(b for b in built if b.cls == rejecting[0][0])
                    reason = Reason("factory-built", "raise", first.evidence.path, first.evidence.line,
                                    f"`{short(site.cls)}` is built ({where}), its configurations' factory builds "
                                    f"`{short(first.cls)}` for its kind, and `{site.where}` makes the call "
                                    f"whenever it runs: every layer so configured raises TypeError")
                    finding = _restated(finding, "high", reason)
                yield finding

    def _own_calls_narrowed(self, ctx: Context) -> Iterable[Finding]:
        """A class's method calling `self.m(...)` on a member it declares, where a subclass that
        runs that very method (it inherits it) overrides `m` with a signature that cannot bind the
        call: every instance of the subclass raises TypeError there. A type checker checks the
        call against the class's own `m`; the override is the drift (`forward_cpu` calling
        `self.forward_native(positions, query, key, offsets)` on a subclass whose override takes
        no `offsets`)."""
        index = ctx.index
        for member in sorted(ctx.member_calls):
            for site, call, (recv, _, how) in ctx.member_calls[member]:
                fn = site.fn
                if how != "call" or site.cls is None or fn.kind != "method" or not fn.params or recv is None \
                        or not is_self(recv, fn.params[0].name) or call.star or call.double_star:
                    continue
                subclasses = index.descendants(site.cls)
                if not subclasses:
                    continue  # (most classes: asked first, it spares the lookups below)
                declared = index.method(site.cls, member)
                if declared is None or declared.fn.kind != "method":
                    continue  # undeclared: the optional calls above; a property or attribute: no call
                shape = CallShape.of(call)
                if bind_error(bound_params(declared.fn), shape, member):
                    continue  # the call fails on the class itself: not an override's drift
                rejecting, accepting = [], [(site.cls, declared.owner, declared.fn, None)]
                for sub in sorted(subclasses):
                    runs, found = index.method(sub, fn.name), index.method(sub, member)
                    if runs is None or runs.owner != site.cls or found is None or found.owner == declared.owner \
                            or found.fn.kind != "method" or found.fn.unimplemented:
                        continue
                    err = bind_error(bound_params(found.fn), shape, f"{index.classes[found.owner].info.name}.{member}")
                    (rejecting if err else accepting).append((sub, found.owner, found.fn, err))
                if not rejecting:
                    continue
                res = Resolution(frozenset({site.cls}), (), via="index")
                finding = self._report(ctx, site, call, shape, member, how, res, [site.cls], rejecting, accepting)
                finding = self.assessed(ctx, finding, [Pairing(self.code, site.cls, impl, member, site, call.line,
                                                               "call", recv) for impl, _, _, _ in rejecting])
                if finding.confidence == "medium":
                    # Claimed only where the tree shows the calling method run on such an object
                    # (self-call's support): a subclass that inherits it but runs other code in
                    # its place (its own entry point over the base's) never makes this call.
                    reason = Reason("self-call", "lower", site.path, fn.line,
                                    f"no way the tree shows runs `{site.fn.name}` on "
                                    f"{', '.join(f'`{short(i)}`' for i in finding.targets[:3])}: the override "
                                    f"disagrees with the call, which may never meet it")
                    finding = _restated(finding, "low", reason)
                yield finding

    def _dropped_parameters(self, ctx: Context) -> Iterable[Finding]:
        """Forwarding calls to a declared member that an override cannot bind: method `m(self, ...,
        k=None)` calling `self.held.m(..., k=k)`, where the held object's static type declares `m`
        with `k` and an override some implementation has dropped or renamed `k` (no `**kwargs`).
        A type checker checks the call against the declaration only and accepts it; the override is
        the drift (the base gained `k`, one override did not). Calls on `self` or `super()` are the
        class's own business; placeholder overrides (`raise NotImplementedError`) fail anyway."""
        index, model = ctx.index, ctx.model
        family_methods = {name for qual in model.family_members if qual in index.classes
                          for name in index.classes[qual].info.methods}
        for member in sorted(family_methods & ctx.member_calls.keys()):
            for site, call, (recv, _, how) in ctx.member_calls[member]:
                fn = site.fn
                if how != "call" or fn.name != member or not call.keywords or call.double_star \
                        or recv is None or not fn.params or _on_self(recv, fn.params[0].name):
                    continue
                own = {q.name for q in fn.params}
                forwarded = [k for k in call.keywords if k in own]
                if not forwarded:
                    continue
                res = ctx.receiver_types(site, recv)
                shape = CallShape.of(call)
                held, asked = None, False  # what the attribute is built with, asked once a static type qualifies
                statics, rejecting, accepting, seen = [], [], [], set()
                for t in sorted(res.instances()):
                    if t not in model.family_members or not model.is_polymorphic(t):
                        continue
                    found = index.method(t, member)
                    if found is None or found.fn.kind != "method":
                        continue
                    base_owner, base_fn = found
                    base_params = bound_params(base_fn)
                    declares = {q.name for q in base_params} & set(forwarded)
                    if not declares or bind_error(base_params, shape, member):
                        continue  # nothing it declares is forwarded, or the declaration itself rejects
                    statics.append(t)
                    if not asked:
                        held, asked = model.classes_read_from_own_attrs(site.cls, fn, recv), True
                    for impl in model.implementations({t}):
                        found = index.method(impl, member)
                        if impl in seen or found is None or found.owner == base_owner or found.fn.kind != "method" \
                                or (held is not None and impl not in held):
                            continue
                        seen.add(impl)
                        owner, impl_fn = found
                        if impl_fn.unimplemented or base_owner not in index.mro(owner):
                            continue
                        params = bound_params(impl_fn)
                        err = bind_error(params, shape, f"{index.classes[owner].info.name}.{member}")
                        takes = {q.name for q in params if q.kind != VAR_POSITIONAL}
                        dropped = err is not None and not any(q.kind == VAR_KEYWORD for q in params) \
                            and bool(declares - takes)
                        (rejecting if dropped else accepting).append((impl, owner, impl_fn, err))
                if not rejecting:
                    continue
                finding = self._report(ctx, site, call, shape, member, how, res, statics, rejecting, accepting,
                                       dropped_from=statics[0])
                finding = self.assessed(ctx, finding, [Pairing(self.code, site.cls, impl, member, site, call.line,
                                                          "call", recv) for impl, _, _, _ in rejecting])
                yield _latent_unless_built(ctx, finding, rejecting)

    def _narrowed_forwards(self, ctx: Context) -> Iterable[Finding]:
        """A wrapper's own override of the API it forwards, narrower than that API: `def
        enable_offload(self, gpu_id=0)` handing `enable_offload` on to its delegates while the
        class that declares it for them (and for the wrapper) takes `(gpu_id=None, device="cuda")`.
        A call through that API (`pipe.enable_offload(device="xpu")`, the base's documented
        signature; often from outside the tree) raises TypeError on the wrapper alone: the base
        gained a parameter and the forwarding override did not. A parameter renamed in the same
        position is not dropped (positional callers still bind); `**kwargs` takes anything."""
        index, model = ctx.index, ctx.model
        for wq, wrapper in sorted(model.wrappers.items()):
            info = index.classes[wq].info
            held = [t for t in wrapper.delegate_types() if t in index.classes]
            for name, fn in sorted(info.methods.items()):
                if name.startswith("_") or fn.kind != "method" or not model.forwards_own_name(wq, name):
                    continue
                base = next((c for c in index.mro(wq)[1:]
                             if c in index.classes and name in index.classes[c].info.methods), None)
                if base is None:
                    continue
                declaring = [c for c in index.mro(base)
                             if c in index.classes and name in index.classes[c].info.methods][-1]
                if not any(declaring in index.mro(t) for t in held):
                    continue  # not the API its delegates share: the wrapper's own business
                base_fn = index.classes[base].info.methods[name]
                dropped = _dropped(bound_params(base_fn), bound_params(fn))
                if dropped:
                    yield self._narrowed_report(ctx, wq, name, fn, base, base_fn, dropped, wrapper)

    def _facade_calls(self, ctx: Context) -> Iterable[Finding]:
        """A class (of no family, or whose held object is of another) that builds its one held
        object from a few classes it names (`self.model = SentencePieceTokenizer(f)` in one branch,
        `HuggingFaceTokenizer(f)` in another) and hands at least two of its own operations to it by
        name: every call it makes of `self.model.m(...)` meets each of those classes, and one that
        cannot bind it raises TypeError in that configuration. The classes are those the
        constructor builds by name (exactly); a parameter or anything unread leaves the class out."""
        index, model = ctx.index, ctx.model
        passed = ctx.tree.passed_values
        for qual in sorted(ctx.self_attr_calls):
            if qual in model.wrappers or qual not in index.classes:
                continue
            for attr, uses in sorted(calls_on_own_attrs(ctx, qual).items()):
                if not hands_own_operations(uses):
                    continue  # a helper it uses, not an object it hands its operations to
                if not _built_by_name(index, qual, attr):
                    continue  # cheap test first: attribute_values() follows every store to its builders
                got = passed.attribute_values(qual, attr)
                if got is None or not got.values or not all(isinstance(t, str) and exact
                                                            for t, exact in got.values.items()):
                    continue
                held = sorted(t for t in got.values if t in index.classes)
                if len(held) < 2 or any(model.same_family(t, qual) for t in held):
                    continue
                for site, call, member in uses:
                    shape = CallShape.of(call)  # `*args`/`**kwargs` of unknown content: only what is provably wrong
                    rejecting, accepting = [], []
                    for impl in held:
                        found = index.method(impl, member)
                        if found is None or found.fn.kind == "property":
                            rejecting = []
                            break
                        owner, fn = found
                        err = bind_error(bound_params(fn), shape, f"{index.classes[owner].info.name}.{member}",
                                         implicit=0 if fn.kind == "staticmethod" else 1)
                        (rejecting if err else accepting).append((impl, owner, fn, err))
                    if rejecting and accepting:
                        recv = ("attr", ("name", site.fn.params[0].name), attr)
                        res = Resolution(frozenset(held), shortened(got.steps, 3))
                        finding = self._report(ctx, site, call, shape, member, "call", res, held, rejecting, accepting)
                        yield self.assessed(ctx, finding, [
                            Pairing(self.code, qual, impl, member, site, call.line, "call", recv)
                            for impl, _, _, _ in rejecting])

    def _narrowed_report(self, ctx, wq, name, fn, base, base_fn, dropped, wrapper) -> Finding:
        index = ctx.index
        entry, be = index.classes[wq], index.classes[base]
        w, b = entry.info.name, be.info.name
        names = ", ".join(f"`{d}`" for d in dropped)
        evidence = [
            Evidence(entry.file.display, fn.line, f"`{w}.{format_signature(fn)}` overrides it"),
            Evidence(be.file.display, base_fn.line, f"`{b}.{format_signature(base_fn)}` declares {names}"),
        ]
        evidence.extend(Evidence(entry.file.display, c.line, f"`{w}.{name}` forwards `{name}` to a delegate")
                        for c in fn.calls[:1] if c.func and is_attr(c.func) and c.func[2] == name)
        for d in wrapper.delegates:
            evidence.extend(replace(e, supporting=True) for e in d.evidence[-1:])
        message = (f"`{w}.{name}` drops {names}, which `{b}.{name}` declares for it and for the delegates it "
                   f"forwards to: a call through that API passing {names} raises TypeError on `{w}` alone")
        finding = self.finding(path=entry.file.display, line=fn.line, column=fn.col + 1, message=message,
                               class_name=wq, member=name, targets=(base,), evidence=evidence,
                               facts=CallFacts(narrowed_from=base, dropped=tuple(dropped)))
        return self.assessed(ctx, finding, ())

    def _report(self, ctx, site, call, shape, member, how, res, statics, rejecting, accepting,
                dropped_from: str | None = None, variant: str | None = None, odd_ones_out: bool = False) -> Finding:
        index = ctx.index
        call_text = (f"`{member}` through `getattr`" if how == "getattr" else f"`.{member}(...)`")
        evidence: list[Evidence] = [Evidence(site.path, call.line,
                                             f"{call_text} in `{site.where}` passes {shape.describe()}; the "
                                             f"receiver is `{', '.join(short(s) for s in statics)}` "
                                             f"(resolved by {res.via})")]
        evidence.extend(shortened(res.steps, 4))
        if dropped_from is not None:
            declared = index.method(dropped_from, member)
            oe = index.classes[declared.owner]
            evidence.append(Evidence(oe.file.display, declared.fn.line,
                                     f"`{oe.info.name}.{format_signature(declared.fn)}` declares the call's "
                                     f"keywords: a type checker accepts it"))
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
        facts = CallFacts(call=f"{site.path}:{call.line}", how=how, rejecting_owner=first[1], error=first[3] or "",
                          caller=_caller(site), variant=variant, odd_ones_out=odd_ones_out)
        if dropped_from is not None:
            message = (f"`.{member}(...)` forwards what `{short(dropped_from)}.{member}` declares, but "
                       f"{n} implementation{'s' if n != 1 else ''} it can reach override{'s' if n == 1 else ''} "
                       f"it without that parameter, e.g. `{short(first[0])}`: TypeError: {first[3]}")
            facts = replace(facts, variant="override-drops-parameter")
        return self.finding(path=site.path, line=call.line, column=call.col + 1, message=message,
                            class_name=site.cls or site.module, member=member,
                            targets=sorted({impl for impl, _, _, _ in rejecting}), evidence=evidence,
                            facts=facts)


def _narrow_overrides(index) -> dict[str, list[tuple[str, object, list, list]]]:
    """member -> [(declaring class, its declaration, its overrides, those lacking a name)] for each
    method declared by a class no base of which declares it, with at least five real overrides
    (placeholders left out) of which some lack a parameter name the declaration takes (a keyword
    call of it fails).
    Grouped by name, each defining class under the farthest class of its MRO that defines it (no
    class's descendants are listed: a chain thousands deep must stay linear)."""
    defining: dict[str, list[str]] = {}
    for qual, entry in index.classes.items():
        for name, fn in entry.info.methods.items():
            if not name.startswith("__") and fn.kind in ("method", "staticmethod", "classmethod"):
                defining.setdefault(name, []).append(qual)
    out: dict[str, list] = {}
    for name, classes in defining.items():
        if len(classes) < 6:
            continue
        members = set(classes)
        under: dict[str, list[str]] = {}
        for d in classes:
            root = next(c for c in reversed(index.mro(d)) if c in members)
            if root != d:
                under.setdefault(root, []).append(d)
        for root, subs in under.items():
            fn = index.classes[root].info.methods[name]
            overrides = [(d, index.classes[d].info.methods[name]) for d in sorted(subs)]
            overrides = [(d, f) for d, f in overrides if f.kind == fn.kind and not f.unimplemented]
            if len(overrides) < 5:
                continue
            names = {p.name for p in bound_params(fn) if p.kind in (POSITIONAL_OR_KEYWORD, KEYWORD_ONLY)}
            lacking = [f for _, f in overrides if _lacks(names, bound_params(f))]
            if lacking:
                out.setdefault(name, []).append((root, fn, overrides, lacking))
    return out


def _drifted(index, owner: str, member: str, fn, shape: CallShape) -> bool:
    """The override is its nearest declaring base's signature that lost a parameter or two: that
    base binds the call, and the override keeps at least as many of its parameter names as it
    lost. A method of another shape altogether (`forward(mixer, hidden_states, ...)` under a base
    `forward(q, k, v, ...)`) is another contract, and an override agreeing with its own branch's
    base (`apply(layer, dispatch_output)` under a base that re-declares it so) is no drift."""
    base = next(((c, index.classes[c].info.methods[member]) for c in index.mro(owner)[1:]
                 if c in index.classes and member in index.classes[c].info.methods), None)
    if base is None or bind_error(bound_params(base[1]), shape, member,
                                  implicit=0 if base[1].kind == "staticmethod" else 1):
        return False
    names = {p.name for p in bound_params(base[1]) if p.kind in (POSITIONAL_OR_KEYWORD, KEYWORD_ONLY)}
    took = {p.name for p in bound_params(fn)}
    lost, kept = names - took, names & took
    return 1 <= len(lost) <= 2 and len(kept) >= len(lost)


def _lacks(names: set[str], override: tuple) -> bool:
    """The override takes no `**kwargs` and lacks one of these parameter names."""
    return not any(p.kind == VAR_KEYWORD for p in override) and bool(names - {p.name for p in override})


def _restated(finding: Finding, level: str, reason: Reason) -> Finding:
    """The finding at `level`, the reason that decided it first among its reasons."""
    return replace(finding, confidence=level, confidence_reasons=(reason, *finding.confidence_reasons))


def _caller(site) -> str:
    """The calling function by short names (`Class.method`, `function`), or the module's last
    part for a call at module level: the subject of the finding's identity."""
    if site.fn.name == "<module>":
        return site.module.rpartition(".")[2]
    return site.where


def _built_by_name(index, qual: str, attr: str) -> bool:
    """Every store of `self.<attr>` in the class's MRO is a call of a capitalised name (`Cls(...)`,
    `mod.Cls(...)`), and there are at least two."""
    n = 0
    for c in index.mro(qual):
        if c not in index.classes:
            return False
        for _, (value, _, _) in index.assignments(c).get(attr, ()):
            if value is None or not is_call(value) or value[1] is None:
                return False
            callee = value[1]
            name = callee[1] if is_name(callee) else callee[2] if is_attr(callee) else ""
            if not name.rpartition(".")[2][:1].isupper():
                return False
            n += 1
    return n >= 2


def _dropped(base: tuple, override: tuple) -> list[str]:
    """The base's parameters a call may pass that the override cannot take: by name where the
    override has no parameter of that name and no `**kwargs`, and (for a positional one) no slot
    at its position either (a rename in place still binds positional callers)."""
    if any(p.kind == VAR_KEYWORD for p in override):
        return []
    names = {p.name for p in override if p.kind in (POSITIONAL_OR_KEYWORD, KEYWORD_ONLY)}
    slots = sum(1 for p in override if p.kind in (POSITIONAL_ONLY, POSITIONAL_OR_KEYWORD))
    varargs = any(p.kind == VAR_POSITIONAL for p in override)
    out, position = [], 0
    for p in base:
        if p.kind in (POSITIONAL_ONLY, POSITIONAL_OR_KEYWORD):
            position += 1
            if p.kind == POSITIONAL_OR_KEYWORD and p.name not in names and position > slots and not varargs:
                out.append(p.name)
        elif p.kind == KEYWORD_ONLY and p.name not in names:
            out.append(p.name)
    return out


def _latent_unless_built(ctx: Context, finding: Finding, rejecting: list) -> Finding:
    """An override that dropped a parameter breaks a real configuration only where an object of
    its class reaches the call. That is claimed (default report) when the tree builds the class
    itself somewhere (`Impl(...)`) or hands the class out as a value (a factory or registry
    returning it, a variable holding it); a class passed only into another class's constructor
    (a component, built inside that class) or used nowhere is latent drift: the override still
    disagrees with its base, but no configuration the analysis can see hands it to this call."""
    if finding.confidence == "low":
        return finding
    from ..linter.signals.model_reach import reach_of

    index = ctx.index
    reach = reach_of(ctx)
    if any(ctx.tree.calls.built_by_name(impl, reach.named_callers) or impl.rsplit(".", 1)[-1] in reach.escaped
           or impl in reach.named_by_strings for impl, _, _, _ in rejecting):
        return finding
    impl, owner, fn, _ = rejecting[0]
    entry = index.classes[owner]
    names = ", ".join(f"`{short(i)}`" for i in sorted({i for i, _, _, _ in rejecting})[:3])
    reason = Reason("unbuilt-override", "lower", entry.file.display, fn.line,
                    f"nothing in the tree builds {names} or hands the class out (no `Impl(...)` call, factory "
                    f"or registry): the override disagrees with its base, but no configuration the analysis "
                    f"sees gives such an object to this call")
    return _restated(finding, "low", reason)


def _on_self(ref: tuple, self_name: str) -> bool:
    """`self` itself or `super()`: a call the class makes on its own hierarchy, not on a held object."""
    return is_self(ref, self_name) or (
        is_call(ref) and ref[1] is not None and is_name(ref[1]) and ref[1][1] == "super")
