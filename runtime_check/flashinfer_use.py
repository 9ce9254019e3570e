"""Does a hook plan a FlashInfer prefill wrapper? Read from the code, never from the hook's name.

The GPU smoke test replays one failure: a FlashInfer ragged-prefill wrapper whose plan is not
renewed for the batch it runs. It is evidence only for a hook that really makes that plan, so a
finding goes to the GPU only when the implementation owning the hidden hook does, read from its
source: the hook's body, the methods it calls on ``self`` and on objects its class holds
(``self.mha_chunk_kv_cache.update_wrapper(...)``), a few calls deep, call ``plan(...)`` or
``begin_forward(...)`` on a FlashInfer prefill wrapper object: one built by a call to a name
imported from a ``flashinfer`` module whose name says it is a prefill wrapper
(``BatchPrefillWithRaggedKVCacheWrapper``, ``BatchPrefillWithPagedKVCacheWrapper``), directly, in
a ``self`` attribute, or in an attribute of an object the class is given. Anything else
(an Ascend NPU hook, a ROCm kernel, a getter) is ``n/a: the hook does not plan FlashInfer``.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..linter.findings import short
from ..linter.model.resolve import Scope
from ..linter.perfile.summary import member_target
from ..linter.refs import is_attr, is_call, is_iter, is_name, is_sub

PLAN_METHODS = ("plan", "begin_forward")
MAX_DEPTH = 4  # calls followed from the hook
NOT_PLANNING = "n/a: the hook does not plan FlashInfer"


@dataclass(frozen=True)
class FlashInferPlan:
    """Where a hook reaches a FlashInfer prefill plan: the chain of methods and the plan call."""

    owner: str
    member: str
    path: str
    line: int
    wrapper_class: str  # the flashinfer class the planned object is built from
    chain: tuple[str, ...]  # Cls.method names from the hook to the plan call

    def describe(self) -> str:
        via = " -> ".join(self.chain)
        return f"{via} calls `{self.wrapper_class}.plan` ({self.path}:{self.line})"


def plans_flashinfer(ctx, owner: str, member: str) -> FlashInferPlan | None:
    """The FlashInfer prefill plan ``owner.member`` reaches, or None."""
    index = ctx.index
    found = index.method(owner, member) if owner in index.classes else None
    if found is None:
        return None
    todo = [(found.owner, found.fn, (f"{short(found.owner)}.{member}",))]
    seen: set[tuple[str, str]] = set()
    while todo:
        cls, fn, chain = todo.pop(0)
        if (cls, fn.name) in seen or len(chain) > MAX_DEPTH or not fn.params:
            continue
        seen.add((cls, fn.name))
        me = ("name", fn.params[0].name)
        entry = index.classes[cls]
        for call in fn.calls:
            target = member_target(fn, call.func)
            if target is None:
                continue
            recv, name, _ = target
            if name in PLAN_METHODS:
                made = _flashinfer_prefill_source(ctx, cls, fn, recv)
                if made:
                    return FlashInferPlan(owner, member, entry.file.display, call.line, made, chain)
                continue
            for helper_cls in _held_classes(ctx, cls, recv, me):
                hit = index.method(helper_cls, name)
                if hit is not None:
                    todo.append((hit.owner, hit.fn, chain + (f"{short(hit.owner)}.{name}",)))
        # `super().hook(...)`: the summary keeps no call on `super()`; the source shows it.
        if _calls_super(ctx, entry.module, cls, fn):
            parents = index.mro(cls)[1:2]
            hit = index.method(parents[0], fn.name) if parents else None
            if hit is not None:
                todo.append((hit.owner, hit.fn, chain + (f"{short(hit.owner)}.{fn.name}",)))
    return None


def _calls_super(ctx, module: str, cls: str, fn) -> bool:
    """Whether ``fn`` calls ``super().<its own name>(...)`` (read from its source lines: the
    summary keeps no call on ``super()``)."""
    import ast
    import textwrap

    mod = ctx.index.modules.get(module)
    if mod is None:
        return False
    try:
        with open(mod.file.path, encoding="utf-8", errors="replace") as fh:
            lines = fh.read().splitlines()[fn.line - 1:fn.end_line]
    except OSError:
        return False
    text = "\n".join(lines)
    if "super()" not in text:
        return False
    try:
        tree = ast.parse(textwrap.dedent(text))
    except SyntaxError:
        return False
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == fn.name
               and isinstance(n.func.value, ast.Call) and isinstance(n.func.value.func, ast.Name)
               and n.func.value.func.id == "super" for n in ast.walk(tree))


def _held_classes(ctx, cls: str, recv: tuple | None, me: tuple) -> list[str]:
    """The classes whose method a call on ``recv`` runs: ``self`` itself, or an object the class
    holds in a ``self`` attribute (resolved by the analysis' resolver)."""
    if recv == me:
        return [cls]
    if is_attr(recv) and recv[1] == me:
        return sorted(ctx.resolver.attribute_of(cls, recv[2]).instances())
    return []


def _flashinfer_prefill_source(ctx, cls: str, fn, ref: tuple | None, depth: int = 0) -> str | None:
    """The flashinfer prefill wrapper class an expression holds an instance of, if any."""
    if ref is None or depth > 6:
        return None
    index = ctx.index
    module = index.classes[cls].module
    if is_call(ref):
        func = ref[1]
        if is_name(func):
            return _imported_prefill_wrapper(ctx, module, func[1])
        return None
    if is_sub(ref) or is_iter(ref):
        return _flashinfer_prefill_source(ctx, cls, fn, ref[1], depth + 1)
    if is_name(ref):
        for value in fn.locals.get(ref[1], ()):
            hit = _flashinfer_prefill_source(ctx, cls, fn, value, depth + 1)
            if hit:
                return hit
        return None
    if is_attr(ref):
        base, attr = ref[1], ref[2]
        me = ("name", fn.params[0].name) if fn.params else None
        owners = [cls] if base == me else sorted(ctx.resolver.resolve(base, Scope(module, cls, fn)).instances())
        if base != me and not owners:
            # An object the class is given (`attn_backend.prefill_wrapper_ragged`) whose type the
            # resolver cannot name: the classes of the same module that set that attribute.
            owners = [q for q, e in index.classes.items() if e.module == module]
        for owner in owners:
            for c in index.mro(owner):
                for afn, assigned in index.assignments(c).get(attr, ()) if c in index.classes else ():
                    hit = _flashinfer_prefill_source(ctx, c, afn, assigned[0], depth + 1)
                    if hit:
                        return hit
    return None


def _imported_prefill_wrapper(ctx, module: str, name: str) -> str | None:
    """``name`` as imported in ``module`` from a flashinfer module, when it is a prefill wrapper."""
    mod = ctx.index.modules.get(module)
    if mod is None:
        return None
    for imp in mod.summary.imports:
        if imp.local == name and (imp.module == "flashinfer" or imp.module.startswith("flashinfer.")):
            real = imp.name or name
            if "Prefill" in real and real.endswith("Wrapper"):
                return f"{imp.module}.{real}"
    return None
