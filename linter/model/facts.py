"""What the tree-wide passes read from one module, computed from that module alone.

Use sites (probes, member calls), constructor calls, the `self` attributes each method reads as
receivers, and the hints of code that unwraps wrappers depend on one summary and nothing else, so
they are computed once per summary object. A one-shot run computes each once; the resident server
(linter/app/server.py) keeps unchanged files' summaries between runs, so after an edit only the edited
files' facts are computed again.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..perfile.summary import CallSite, FunctionInfo, ModuleSummary, Probe, member_target
from ..refs import (
    base_of,
    is_attr,
    is_getattr,
    is_item,
    is_name,
    is_name_of,
    is_self,
    is_seq,
    is_super_init,
    is_union,
    root_name,
)
from .resolve import Scope


@dataclass(slots=True)  # not frozen: a frozen dataclass is built through object.__setattr__, field by field
class Site:
    """Where a probe or call sits: module, enclosing class (qualified) and function."""

    module: str
    cls: str | None
    fn: FunctionInfo
    path: str

    @property
    def scope(self) -> Scope:
        return Scope(self.module, self.cls, self.fn)

    @property
    def where(self) -> str:
        if self.fn.name == "<module>":
            return "module level"
        owner = self.cls.rsplit(".", 1)[-1] + "." if self.cls else ""
        return f"{owner}{self.fn.name}"


@dataclass(slots=True)
class UnwrapHint:
    """A function that may look through wrappers: what it probes and which attributes a local
    walks down through (`b = b.full_attn_backend`). Which of those names are wrapper structure is
    known only tree-wide."""

    cls: str | None
    fn: FunctionInfo
    probes: tuple[tuple[str, bool], ...]  # (member, probed on the method's own `self`)
    steps: frozenset[str]


@dataclass(slots=True)
class ModuleFacts:
    probes: dict[str, list[tuple[Site, Probe]]]  # member -> (site, probe)
    member_calls: dict[str, list[tuple[Site, CallSite, tuple]]]  # member -> (site, call, (receiver, member, how))
    # Member calls whose target may vary by design: through getattr, on `self` for a member the
    # class does not declare itself, or guarded by a probe of the same member in the same function.
    optional_candidates: list[tuple[Site, CallSite, tuple]]
    # Member calls on an object read from a `self` attribute, by class: a wrapper's forwarding.
    self_attr_calls: dict[str, list[tuple[Site, CallSite, tuple]]]
    constructions: list[tuple[str, Scope, tuple]]  # (callee's last name, scope, construction)
    receiver_attrs: dict[str, set[str]]  # class -> `self` attributes its methods read as receivers
    unwrap_hints: list[UnwrapHint]
    # What a tree pass derives from this module alone, memoized by the pass under its own name:
    # kept as long as these facts are (the resident server keeps unchanged modules' between runs).
    derived: dict = field(default_factory=dict)


_FACTS: dict[tuple[int, str, str], tuple[ModuleSummary, ModuleFacts]] = {}
_RUNS: dict[str, set[tuple[int, str, str]]] = {}  # run name -> the keys it used, oldest first


def facts_of(module: str, path: str, summary: ModuleSummary) -> ModuleFacts:
    # The summary is held beside its facts, so its id cannot be reused while the entry lives.
    key = key_of(module, path, summary)
    hit = _FACTS.get(key)
    if hit is None:
        hit = _FACTS[key] = (summary, _compute(module, path, summary))
    return hit[1]


def retain(run: str, keys: set[tuple[int, str, str]], runs_kept: int = 1) -> None:
    """Keep the facts of the last `runs_kept` runs (by run name: one per set of analysed paths)
    and forget the rest, such as edited files' old versions."""
    _RUNS.pop(run, None)
    _RUNS[run] = keys
    while len(_RUNS) > runs_kept:
        _RUNS.pop(next(iter(_RUNS)))
    live = set().union(*_RUNS.values())
    for key in [k for k in _FACTS if k not in live]:
        del _FACTS[key]


def key_of(module: str, path: str, summary: ModuleSummary) -> tuple[int, str, str]:
    return (id(summary), module, path)


def function_ref(module: str, cls: str | None, fn: FunctionInfo) -> tuple:
    """A function as the resolver names it in a type (`("fn", qual)`, `("method", class, name)`):
    identical files in two modules may share one summary, so a FunctionInfo object alone does not
    say which function of the tree it is."""
    return ("method", cls, fn.name) if cls else ("fn", f"{module}.{fn.name}")


def scopes_of(module: str, summary: ModuleSummary) -> list[tuple[str | None, FunctionInfo]]:
    out: list[tuple[str | None, FunctionInfo]] = [(None, summary.toplevel)]
    out.extend((None, f) for f in summary.functions.values())
    for cname, cinfo in summary.classes.items():
        out.extend((f"{module}.{cname}", f) for f in cinfo.methods.values())
    return out


def _compute(module: str, path: str, summary: ModuleSummary) -> ModuleFacts:
    facts = ModuleFacts({}, {}, [], {}, [], {}, [])
    declared: dict[str, set[str]] = {}  # class -> members it declares itself
    for cname, cinfo in summary.classes.items():
        names = declared[f"{module}.{cname}"] = set(cinfo.methods) | set(cinfo.attrs)
        for method in cinfo.methods.values():
            names.update(method.self_attrs)
    for cqual, fn in scopes_of(module, summary):
        site = None
        self_name = fn.params[0].name if cqual and fn.params else None
        probed = {(p.member, p.receiver) for p in fn.probes} if fn.probes else ()
        for probe in fn.probes:
            site = site or Site(module, cqual, fn, path)
            facts.probes.setdefault(probe.member, []).append((site, probe))
        receivers = []  # of member calls: where `self` attributes are read as receivers
        for call in fn.calls:
            func = call.func
            # (member_target, with its commonest case first)
            target = (func[1], func[2], "call") if is_attr(func) else member_target(fn, func)
            if target is None:
                continue
            receivers.append(target[0])
            site = site or Site(module, cqual, fn, path)
            entry = (site, call, target)
            recv, member, how = target
            facts.member_calls.setdefault(member, []).append(entry)
            if how == "getattr" or (member, recv) in probed or (
                    self_name is not None and is_self(recv, self_name) and member not in declared[cqual]):
                facts.optional_candidates.append(entry)
            elif self_name is not None and mentions_self_attr(recv, fn, self_name, None):
                facts.self_attr_calls.setdefault(cqual, []).append(entry)
        scope = None
        for construction in fn.constructions:
            callee = construction[0]
            if is_super_init(callee):
                continue  # found through the subclass
            last = callee[1].rsplit(".", 1)[-1] if is_name(callee) else callee[-1]
            scope = scope or Scope(module, cqual, fn)
            facts.constructions.append((last, scope, construction))
            if is_name(callee) and callee[1] in fn.locals:
                # `cls = Split` then `cls(...)`: found under each class name the local is bound to.
                for value in fn.locals[callee[1]]:
                    if value and is_name(value) and value[1] != last:
                        facts.constructions.append((value[1].rsplit(".", 1)[-1], scope, construction))
        if cqual and fn.params:
            forwarded_attrs(fn, fn.params[0].name, receivers, facts.receiver_attrs.setdefault(cqual, set()))
        steps: set[str] = set()
        for local, values in fn.locals.items():
            steps |= steps_down(local, values)
        if fn.probes or steps:
            own_self = fn.params[0].name if fn.params else None
            facts.unwrap_hints.append(UnwrapHint(cqual, fn, tuple(
                (p.member, root_name(p.receiver) == own_self) for p in fn.probes), frozenset(steps)))
    return facts


def forwarded_attrs(fn: FunctionInfo, self_name: str, call_receivers: list, out: set[str]) -> None:
    """`self.<attr>` read anywhere a delegate can be reached from: a call or probe receiver
    (directly, through a loop, an index or a local), a returned value (`_select_backend`)."""
    refs = list(call_receivers)
    refs.extend(p.receiver for p in fn.probes)
    refs.extend(fn.return_values)
    through_locals: dict[str, frozenset[str]] = {}  # a local's answer, computed once per function
    for ref in refs:
        _self_attrs_in(ref, fn, self_name, out, 0, through_locals)


def _self_attrs_in(ref, fn: FunctionInfo, self_name: str, out: set[str], depth: int,
                   through_locals: dict[str, frozenset[str]]) -> None:
    if ref is None or depth > 6:
        return
    if is_attr(ref) and is_self(ref[1], self_name):
        out.add(ref[2])
    elif (base := base_of(ref)) is not None:
        _self_attrs_in(base, fn, self_name, out, depth + 1, through_locals)
    elif is_name(ref) and ref[1] in fn.locals:
        hit = through_locals.get(ref[1])
        if hit is None:
            through_locals[ref[1]] = frozenset()  # cycle guard: `x = x.next`
            found: set[str] = set()
            for value in fn.locals[ref[1]]:
                _self_attrs_in(value, fn, self_name, found, depth + 1, through_locals)
            hit = through_locals[ref[1]] = frozenset(found)
        out |= hit
    elif is_seq(ref) or is_union(ref):
        for item in ref[1]:
            _self_attrs_in(item, fn, self_name, out, depth + 1, through_locals)


def steps_down(local: str, values: tuple) -> set[str]:
    """`b = b.full_attn_backend` (or `getattr(b, "primary", b)`): a loop variable walking down
    through wrappers. Returns the attribute names it walks through."""
    out = set()
    for value in values:
        while isinstance(value, tuple) and value and is_union(value):
            value = value[1][0] if value[1] else None
        if isinstance(value, tuple) and value and (is_attr(value) or is_getattr(value)) and is_name_of(value[1], local):
            out.add(value[2])
    return out


def mentions_self_attr(ref: tuple | None, fn: FunctionInfo, self_name: str, attrs: set[str] | None,
                       depth: int = 0) -> str | None:
    """Which `self.<attr>` (of `attrs`; None: any) an expression is read from, through locals,
    loops, indexing."""
    if ref is None or depth > 6:
        return None
    if is_attr(ref):
        # `self.<attr>` itself; any other attribute is not read from `self.<attr>` here
        return ref[2] if is_self(ref[1], self_name) and (attrs is None or ref[2] in attrs) else None
    if is_item(ref) or is_getattr(ref):
        return mentions_self_attr(ref[1], fn, self_name, attrs, depth + 1)
    if is_name(ref) and ref[1] in fn.locals:
        for value in fn.locals[ref[1]]:
            hit = mentions_self_attr(value, fn, self_name, attrs, depth + 1)
            if hit:
                return hit
    if is_seq(ref) or is_union(ref):
        for item in ref[1]:
            hit = mentions_self_attr(item, fn, self_name, attrs, depth + 1)
            if hit:
                return hit
    return None
