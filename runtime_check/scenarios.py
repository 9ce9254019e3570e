"""Replay each finding on the real classes: one scenario per rule.

Every scenario works on an instance made **without** ``__init__`` (``object.__new__``): the
constructor of a serving backend allocates GPU buffers, reads configs and starts kernels, none of
which the claim is about. What the claim is about is set by hand: the delegate attributes the
finding names hold recording stand-in delegates (``standins.make_delegate``), and the real method
under test runs against them.

* AL001 (hidden hook): ``hasattr`` / ``getattr(..., None)`` / ``try: x.h except AttributeError``
  on the wrapper, exactly as at the probe, while its delegates define the hook. Confirmed when the
  probe says "absent" although the stand-in delegate has the hook, and a real owner class (one the
  finding names) defines it.
* AL002 (delegation TypeError): the real wrapper method that contains the call runs, its receiver
  (a delegate attribute, a parameter, an item of a delegate list...) set to a stand-in whose method
  has exactly the rejecting implementation's signature (``inspect.signature`` on the really loaded
  class; rebuilt from the source summary when that class cannot be loaded). Reproduced when the
  call reaches the stand-in and Python refuses to bind it: the TypeError text is Python's own. The
  receiver may be a delegate attribute (set in ``__init__`` or built lazily by a method or
  property of the class), a parameter or a local bound from one, or ``self`` where the rejecting
  implementation is a subclass: then the method runs on an instance of that real subclass.
* AL003 (inherited default): ``getattr(wrapper, hook)`` resolves to the family base's function (or,
  for a placeholder, the wrapper's own) and calling it returns without any delegate's hook running
  (a no-op), or raises NotImplementedError without reaching one (a placeholder).

A scenario's verdict is ``fact`` when the real classes do what the finding says (decisions.py
names it: attribute-hidden, call-rejected, noop-reached or placeholder-reached), ``not-reproduced``
when they do not,
``unverifiable`` with the reason. AL001/AL002 facts also carry a ``GpuPlan``: how to put the real
wrapper in front of a backend owning the hook (``verify.py`` runs it where the hook plans
FlashInfer, see flashinfer_use.py).
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..linter.findings import Finding, short, unlabelled
from ..linter.refs import is_attr, is_call, is_getattr, is_iter, is_name, is_self, is_sub, is_union
from ..rules.al001_unforwarded_hook import HiddenHookFacts, UnforwardedHook
from ..rules.al002_delegation_signature_mismatch import CallFacts, DelegationSignatureMismatch
from ..rules.al003_wrapper_inherits_noop_default import NoopDefaultFacts, WrapperInheritsNoopDefault
from ..rules.base import Rule
from .instances import new_instance, set_attr
from .loader import TreeLoader, one_line, silenced
from .standins import AnyItem, Namespace, Standin, delegate_log, make_delegate, signature_from_params

CALL_TIME_LIMIT = 10.0  # seconds for one real method call
_MISSING = object()


@dataclass
class Outcome:
    verdict: str  # fact (the static fact reproduced) | not-reproduced | unverifiable
    detail: str
    load_mode: str
    facts: dict[str, Any] = field(default_factory=dict)
    gpu_plan: GpuPlan | None = None


@dataclass
class GpuPlan:
    """What the FlashInfer smoke test needs to drive a confirmed finding end to end."""

    member: str
    signature: inspect.Signature | None  # the delegate implementation's hook signature (with self)
    standin_class_name: str
    make_front: Callable[[Any], tuple[Any, tuple]]  # backend -> (front, call_args)
    front_desc: str
    owner: str = ""  # the implementation whose hook the backend behind the front runs
    flashinfer: str = ""  # how that hook plans FlashInfer (flashinfer_use.py), set by verify.py


Replay = Callable[[Finding, Any, TreeLoader], Outcome]
# Each rule's replay of its static fact on the real classes, by the rule's class (Rule.runtime_check
# says what the fact is called; verify.py runs the replay).
REPLAYS: dict[type[Rule], Replay] = {}


def replays(rule: type[Rule]) -> Callable[[Replay], Replay]:
    """Register the decorated function as `rule`'s replay (one per rule)."""
    def register(fn: Replay) -> Replay:
        if rule in REPLAYS:
            raise ValueError(f"{rule.code} already has a replay: {REPLAYS[rule].__name__}")
        REPLAYS[rule] = fn
        return fn
    return register


# --------------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------------

def tree_class(ctx, loader: TreeLoader, qual: str):
    entry = ctx.index.classes.get(qual)
    if entry is None:
        return None, f"`{qual}` is not a class of the analysed tree"
    lc = loader.load_class(qual, entry.module)
    if lc.cls is None:
        return lc, f"cannot load `{short(qual)}`: {lc.error}"
    missing = _missing_bases(ctx, qual, lc.cls)
    if missing:
        return lc, (f"the loaded `{short(qual)}` ({lc.mode}) lacks its real in-tree base"
                    f"{'s' if len(missing) > 1 else ''} {', '.join(f'`{short(m)}`' for m in missing)} "
                    f"(a stand-in took its place: its module did not load far enough)")
    return lc, None


def _missing_bases(ctx, qual: str, cls: type) -> list[str]:
    """In-tree ancestors (per the static index) that the loaded class's MRO does not contain.

    A class whose base module failed to load derives from a stand-in instead; verdicts on such
    a class could be wrong (the hook may live on the missing base), so it is not used."""
    have = {(getattr(k, "__module__", None), getattr(k, "__qualname__", None)) for k in cls.__mro__}
    out = []
    for anc in ctx.index.mro(qual)[1:]:
        entry = ctx.index.classes.get(anc)
        if entry is not None and (unlabelled(entry.module), entry.info.name) not in have:
            out.append(anc)
    return out


def _static_owner(obj: Any, member: str) -> type | None:
    """The class in ``type(obj).__mro__`` whose ``__dict__`` defines ``member``."""
    return _raw_member(type(obj), member)[0]


def _raw_member(cls: type, member: str) -> tuple[type | None, Any]:
    for k in cls.__mro__:
        if member in vars(k):
            return k, vars(k)[member]
    return None, _MISSING


def _member_kind(raw: Any) -> str:
    if isinstance(raw, staticmethod):
        return "staticmethod"
    if isinstance(raw, classmethod):
        return "classmethod"
    if isinstance(raw, property) or (hasattr(type(raw), "__get__") and hasattr(type(raw), "__set__")):
        return "property"
    if inspect.isfunction(raw) or inspect.ismethoddescriptor(raw) or callable(raw):
        return "method"
    return "attribute"


def _signature_of(raw: Any) -> inspect.Signature | None:
    fn = raw.__func__ if isinstance(raw, (staticmethod, classmethod)) else raw
    try:
        return inspect.signature(fn)
    except (TypeError, ValueError):
        return None


def _instance_attrs(ctx, qual: str) -> set[str]:
    """Attributes the class (and its in-tree ancestors) assign on ``self`` in any method."""
    index = ctx.index
    return {a for c in index.mro(qual) if c in index.classes for a in index.assignments(c)}


def populate(ctx, qual: str, inst: Any) -> None:
    """Give every attribute the class assigns on ``self`` a permissive stand-in (unless a
    class-level attribute, property or method of that name exists), so that a real method reaches
    the call under test instead of stopping at the first attribute ``__init__`` would have set."""
    cls = type(inst)
    for name in sorted(_instance_attrs(ctx, qual)):
        if _raw_member(cls, name)[1] is not _MISSING:
            continue
        set_attr(inst, name, Standin(f"self.{name}"))


def delegate_attrs(ctx, qual: str, named: tuple[str, ...] | None = None) -> list[tuple[str, bool]]:
    """The delegate attributes of the wrapper `qual`, with whether each holds a sequence: as the
    family model knows them, else the ones a finding's facts name (`named`)."""
    wrapper = ctx.model.wrappers.get(qual) if ctx is not None else None
    if wrapper is not None and wrapper.delegates:
        return [(d.attr, d.sequence) for d in wrapper.delegates]
    return [(a, False) for a in named or ()]


def plant_delegates(inst: Any, attrs: list[tuple[str, bool]], delegate: Any) -> list[str]:
    out = []
    for attr, seq in attrs:
        set_attr(inst, attr, [delegate] if seq else delegate)
        out.append(f"self.{attr}" + ("[...]" if seq else ""))
    return out


def _standin_args(sig: inspect.Signature | None, skip_first: bool,
                  given: dict[str, Any] | None = None) -> tuple[list, dict]:
    """Permissive stand-ins for the required parameters (``given`` overrides by name)."""
    given = given or {}
    args: list = []
    kwargs: dict = {}
    if sig is None:
        return args, kwargs
    params = list(sig.parameters.values())
    if skip_first and params and params[0].kind in (inspect.Parameter.POSITIONAL_ONLY,
                                                    inspect.Parameter.POSITIONAL_OR_KEYWORD):
        params = params[1:]
    positional_ok = True
    for p in params:
        if p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD):
            if p.name in given:
                if positional_ok:
                    args.append(given[p.name])
                else:
                    kwargs[p.name] = given[p.name]
            elif p.default is inspect.Parameter.empty:
                if positional_ok:
                    args.append(Standin(p.name))
                else:
                    kwargs[p.name] = Standin(p.name)
            else:
                positional_ok = False
        elif p.kind is inspect.Parameter.KEYWORD_ONLY:
            if p.name in given:
                kwargs[p.name] = given[p.name]
            elif p.default is inspect.Parameter.empty:
                kwargs[p.name] = Standin(p.name)
    return args, kwargs


def _call(loader: TreeLoader, fn: Callable, args: list, kwargs: dict) -> tuple[Any, BaseException | None]:
    """Run real user code under the call time limit; coroutines and generators are driven too."""
    try:
        with silenced(), loader._deadlines.limit(CALL_TIME_LIMIT):
            result = fn(*args, **kwargs)
            if inspect.iscoroutine(result):
                result = asyncio.new_event_loop().run_until_complete(result)
            elif inspect.isgenerator(result):
                result = list(itertools.islice(result, 10000))
        return result, None
    except KeyboardInterrupt:
        raise
    except BaseException as exc:
        return None, exc


def fmt_sig(name: str, sig: inspect.Signature | None) -> str:
    """``name(params)`` without annotations (they are strings under postponed evaluation)."""
    if sig is None:
        return f"{name}(...)"
    plain = sig.replace(parameters=[p.replace(annotation=inspect.Parameter.empty) for p in sig.parameters.values()],
                        return_annotation=inspect.Signature.empty)
    return f"{name}{plain}"


@dataclass(frozen=True)
class OwnerSignature:
    """What the run time (or, failing that, the source) says of ``owner.member``."""
    kind: str | None  # "method", "staticmethod", "classmethod", "property", ...; None: no such member
    signature: inspect.Signature | None
    how: str | None  # how the signature was read
    loaded: Any  # the loaded class (LoadedClass), or None
    error: str | None


def owner_signature(ctx, loader: TreeLoader, owner: str, member: str) -> OwnerSignature:
    """The kind and signature of ``owner.member``: from the loaded class, else rebuilt from the source."""
    lc, err = tree_class(ctx, loader, owner)
    if lc is not None and lc.cls is not None:
        k, raw = _raw_member(lc.cls, member)
        if raw is not _MISSING:
            kind = _member_kind(raw)
            sig = _signature_of(raw) if kind in ("method", "staticmethod", "classmethod") else None
            return OwnerSignature(kind, sig, f"inspect.signature on the {lc.mode} class", lc, None)
    found = ctx.index.method(owner, member) if owner in ctx.index.classes else None
    if found is not None:
        fn = found.fn
        kind = fn.kind if fn.kind in ("staticmethod", "classmethod", "property") else "method"
        return OwnerSignature(kind, signature_from_params(fn.params), "rebuilt from the source", lc, err)
    return OwnerSignature(None, None, None, lc, err or f"`{short(owner)}` has no `{member}`")


# --------------------------------------------------------------------------------------------
# AL001
# --------------------------------------------------------------------------------------------

@replays(UnforwardedHook)
def verify_al001(finding: Finding, ctx, loader: TreeLoader) -> Outcome:
    wq, member = finding.class_name, finding.member
    lc, err = tree_class(ctx, loader, wq)
    if err:
        return Outcome("unverifiable", err, lc.mode if lc else "failed", {"load_problem": True})
    cls = lc.cls
    mode = lc.mode

    # A real owner must define the hook; its kind decides the stand-in's.
    hook = HiddenHookFacts.of(finding)
    owners = list(hook.owners or ()) or list(finding.targets)
    owner_fact = None
    owner_errors = []
    for owner in owners:
        olc, oerr = tree_class(ctx, loader, owner)
        if oerr:
            owner_errors.append(oerr)
            continue
        k, raw = _raw_member(olc.cls, member)
        if raw is not _MISSING:
            kind = _member_kind(raw)
            sig = _signature_of(raw) if kind in ("method", "staticmethod", "classmethod") else None
            owner_fact = (owner, kind, sig, f"`{k.__name__}.{member}` is a real {kind}", olc.mode)
            break
        if member in _instance_attrs(ctx, owner):
            owner_fact = (owner, "attribute", None,
                          f"`{short(owner)}` assigns `self.{member}` in a method (read from its source; "
                          f"constructors are not run)", olc.mode)
            break
        owner_errors.append(f"the loaded `{short(owner)}` ({olc.mode}) has no `{member}`")
    if owner_fact is None:
        if owner_errors and all(e.startswith("the loaded") for e in owner_errors):
            return Outcome("not-reproduced", "no delegate implementation defines the hook at run time: "
                           + "; ".join(owner_errors), mode)
        return Outcome("unverifiable", "cannot check that a delegate implementation defines the hook: "
                       + "; ".join(owner_errors), mode, {"load_problem": True})
    owner, kind, sig, owner_note, owner_mode = owner_fact

    delegate = make_delegate(member, kind=kind, signature=sig, class_name=short(owner))
    inst = new_instance(cls)
    planted = plant_delegates(inst, delegate_attrs(ctx, wq, hook.delegates), delegate)
    if not planted:
        return Outcome("unverifiable", f"no delegate attribute of `{short(wq)}` is known", mode)

    probe_kind = hook.probe_kind or "hasattr"
    probe_text = {"hasattr": f"hasattr(w, {member!r})", "getattr-default": f"getattr(w, {member!r}, None)",
                  "try-except": f"w.{member} under except AttributeError"}.get(probe_kind, f"hasattr(w, {member!r})")
    try:
        with silenced(), loader._deadlines.limit(CALL_TIME_LIMIT):
            if probe_kind == "getattr-default":
                found = getattr(inst, member, None) is not None
            elif probe_kind == "try-except":
                try:
                    getattr(inst, member)
                    found = True
                except AttributeError:
                    found = False
            else:
                found = hasattr(inst, member)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:
        return Outcome("unverifiable", f"the probe `{probe_text}` raised {one_line(exc)}", mode)
    facts = {"probe": probe_text, "probe_result": found, "delegates": planted, "owner": owner,
             "owner_load_mode": owner_mode}
    if found:
        where = _static_owner(inst, member)
        if where is not None:
            why = f"the real `{where.__name__}` defines `{member}`"
        elif _static_owner(inst, "__getattr__") not in (None, object):
            why = f"`{_static_owner(inst, '__getattr__').__name__}.__getattr__` forwards it"
        else:
            why = "the instance has it"
        return Outcome("not-reproduced", f"`{probe_text}` is True on a real `{short(wq)}` ({why}): "
                                         f"the static claim does not hold", mode, facts)
    ga_owner = _static_owner(inst, "__getattr__")
    if ga_owner is not None and ga_owner is not object:
        # A __getattr__ answered "absent": make sure it was about the hook, not about state that
        # __init__ would have set (then a real instance might answer otherwise).
        try:
            with silenced(), loader._deadlines.limit(CALL_TIME_LIMIT):
                vars(ga_owner)["__getattr__"](inst, member)
        except AttributeError as exc:
            if member not in str(exc):
                return Outcome("unverifiable", f"`{ga_owner.__name__}.__getattr__` failed on state the constructor "
                                               f"sets ({one_line(exc)}), so the probe's answer is not the real one",
                               mode, facts)
        except KeyboardInterrupt:
            raise
        except BaseException as exc:
            return Outcome("unverifiable", f"`{ga_owner.__name__}.__getattr__` raised {one_line(exc)}", mode, facts)
    has = hasattr(delegate, member)
    if not has:  # cannot happen unless the stand-in is broken; say so rather than confirm
        return Outcome("unverifiable", "the stand-in delegate lost the hook", mode, facts)
    detail = (f"`{probe_text}` is False on a real `{short(wq)}` whose {', '.join(planted)} hold a stand-in "
              f"`{short(owner)}` that has it; {owner_note}")
    plan = None
    if kind == "method":
        attrs = delegate_attrs(ctx, wq, hook.delegates)

        def make_front(backend: Any, _cls=cls, _attrs=attrs) -> tuple[Any, tuple]:
            front = new_instance(_cls)
            plant_delegates(front, _attrs, backend)
            return front, ()

        plan = GpuPlan(member, sig, short(owner), make_front, f"real {short(wq)}", owner)
    return Outcome("fact", detail, mode, facts, plan)


# --------------------------------------------------------------------------------------------
# AL002
# --------------------------------------------------------------------------------------------

def _enclosing_method(entry, line: int):
    best = None
    for fn in entry.info.methods.values():
        if fn.line <= line <= fn.end_line and (best is None or fn.line > best.line):
            best = fn
    return best


def _call_receiver(fn, line: int, member: str) -> tuple | None:
    """The receiver ref of the call to ``member`` at ``line`` (through a getattr-bound local too)."""
    for call in fn.calls:
        if call.line != line:
            continue
        func = call.func
        if (is_attr(func) or is_getattr(func)) and func[2] == member:
            return func[1]
        if is_name(func):
            for ref in fn.locals.get(func[1], ()):
                if (is_getattr(ref) or is_attr(ref)) and ref[2] == member:
                    return ref[1]
    return None


def _plant(ref: tuple | None, value: Any, inst: Any, self_name: str, params: set[str], locals_: dict,
           args: dict, depth: int = 0) -> str | None:
    """Make ``ref`` evaluate to ``value`` inside the method; a description, or None if impossible."""
    if ref is None or depth > 8:
        return None
    if is_name(ref):
        name = ref[1]
        if name == self_name:
            return None
        if name in params:
            args[name] = value
            return f"argument {name}"
        for r in locals_.get(name, ()):
            got = _plant(r, value, inst, self_name, params, locals_, args, depth + 1)
            if got:
                return got
        return None
    if is_attr(ref):
        base, attr = ref[1], ref[2]
        if is_self(base, self_name):
            set_attr(inst, attr, value)
            return f"self.{attr}"
        holder = Namespace()
        setattr(holder, attr, value)
        inner = _plant(base, holder, inst, self_name, params, locals_, args, depth + 1)
        return f"{inner} (.{attr})" if inner else None
    if is_sub(ref) or is_iter(ref):
        inner = _plant(ref[1], AnyItem(value), inst, self_name, params, locals_, args, depth + 1)
        return f"items of {inner}" if inner else None
    if is_call(ref) and is_attr(ref[1]) and is_self(ref[1][1], self_name):
        # `self._get_client()`: a client the class builds lazily; its builder returns the delegate.
        name = ref[1][2]
        set_attr(inst, name, lambda *a, **k: value)
        return f"self.{name}()"
    if is_union(ref):
        for r in ref[1]:
            got = _plant(r, value, inst, self_name, params, locals_, args, depth + 1)
            if got:
                return got
    return None


def _shadowing(cls: type, recv: tuple | None, self_name: str) -> type:
    """``cls``, or a subclass of it whose receiver attribute is plain: a lazily built client behind
    a property (``self.client`` computing and caching it) is set like any attribute."""
    names = set()
    ref = recv
    while is_attr(ref) or is_sub(ref) or is_iter(ref) or is_call(ref):
        if is_attr(ref) and is_self(ref[1], self_name):
            names.add(ref[2])
        ref = ref[1]
    props = {n for n in names for k in cls.__mro__ if isinstance(vars(k).get(n), property)}
    if not props:
        return cls
    return type(cls.__name__, (cls,), dict.fromkeys(props) | {"__module__": cls.__module__,
                                                                   "__qualname__": cls.__qualname__})


def _receiver_attr(recv: tuple | None, self_name: str, attrs: list[tuple[str, bool]]) -> str | None:
    """The ``self`` attribute the call's receiver is read from, if any."""
    ref = recv
    while is_attr(ref) or is_sub(ref) or is_iter(ref) or is_call(ref) or is_getattr(ref):
        if is_attr(ref) and is_self(ref[1], self_name):
            return ref[2]
        if is_call(ref) and is_attr(ref[1]) and is_self(ref[1][1], self_name):
            return ref[1][2]
        ref = ref[1]
    return attrs[0][0] if attrs and recv is None else None


@replays(DelegationSignatureMismatch)
def verify_al002(finding: Finding, ctx, loader: TreeLoader) -> Outcome:
    member = finding.member
    stated = CallFacts.of(finding)
    if stated.narrowed_from:
        return Outcome("unverifiable", f"the finding is the override's signature against "
                                       f"`{short(stated.narrowed_from)}.{member}`: no call in the "
                                       f"tree passes the dropped parameter, so there is none to replay", "n/a")
    call = stated.call or f"{finding.path}:{finding.line}"
    call_line = int(call.rsplit(":", 1)[1]) if call.rsplit(":", 1)[-1].isdigit() else finding.line
    cq = finding.class_name
    entry = ctx.index.classes.get(cq)
    if entry is None:
        return Outcome("unverifiable", f"the call at {call} is in module-level code (`{cq}`), not in a method "
                                       f"whose receiver the check can set", "n/a")
    fn_info = _enclosing_method(entry, call_line)
    if fn_info is None:
        return Outcome("unverifiable", f"no method of `{short(cq)}` contains line {call_line}", "n/a")
    lc, err = tree_class(ctx, loader, cq)
    if err:
        return Outcome("unverifiable", err, lc.mode if lc else "failed", {"load_problem": True})
    cls, mode = lc.cls, lc.mode
    raw = vars(cls).get(fn_info.name, _MISSING)
    if raw is _MISSING:
        return Outcome("unverifiable", f"the loaded `{short(cq)}` has no `{fn_info.name}` of its own "
                                       f"(defined under a condition?)", mode)
    mkind = _member_kind(raw)
    if mkind == "property":
        return Outcome("unverifiable", f"`{fn_info.name}` is a property; only methods are replayed", mode)

    owner = stated.rejecting_owner or (finding.targets[0] if finding.targets else "")
    found = owner_signature(ctx, loader, owner, member)
    okind, osig, how_sig, olc, oerr = found.kind, found.signature, found.how, found.loaded, found.error
    if okind is None:
        return Outcome("unverifiable", f"cannot read the signature of `{short(owner)}.{member}`: {oerr}", mode,
                       {"load_problem": True})
    if okind == "property":
        return Outcome("unverifiable", f"`{short(owner)}.{member}` is a property", mode)
    owner_mode = olc.mode if olc is not None and olc.cls is not None else "source"

    recv = _call_receiver(fn_info, call_line, member)
    real_fn = raw.__func__ if isinstance(raw, (staticmethod, classmethod)) else raw
    try:
        wsig = inspect.signature(real_fn)
    except (TypeError, ValueError):
        wsig = None
    params = list(wsig.parameters) if wsig is not None else [p.name for p in fn_info.params]
    self_name = params[0] if params and mkind == "method" else ""
    attrs = delegate_attrs(ctx, cq)

    # A call on `self` reaches the rejecting implementation when it is a subclass that inherits
    # the calling method: the method then runs on an instance of that real subclass.
    on_self = is_self(recv, self_name) and mkind == "method"
    owner_cls = olc.cls if olc is not None and olc.cls is not None else None
    if on_self and (owner_cls is None or not issubclass(owner_cls, cls)):
        return Outcome("unverifiable", f"the call at {call} is on `self`, and `{short(owner)}` is not a loaded "
                                       f"subclass of `{short(cq)}`", mode, {"load_problem": owner_cls is None})
    run_cls = owner_cls if on_self else _shadowing(cls, recv, self_name)

    def build(delegate: Any) -> tuple[Any, dict, list[str]]:
        inst = new_instance(run_cls)
        populate(ctx, cq, inst)
        planted = plant_delegates(inst, attrs, delegate) if attrs else []
        given: dict[str, Any] = {}
        if on_self:
            # The instance's own `member` is the stand-in with the real signature (bound to the
            # recording delegate): the real body never runs, Python's binding decides.
            set_attr(inst, member, getattr(delegate, member))
            how = f"self (a real `{short(owner)}`)"
        else:
            how = _plant(recv, delegate, inst, self_name, set(params), fn_info.locals, given)
        if how:
            if how in planted:
                planted.remove(how)
            planted.insert(0, how)  # the call's own receiver first
        return inst, given, planted

    # Attributes other than the hook (a delegate's forward_extend...) are permissive stand-ins.
    delegate = make_delegate(member, kind=okind, signature=osig, class_name=short(owner), permissive=True)
    inst, given, planted = build(delegate)
    if not planted:
        return Outcome("unverifiable", f"the receiver of the call at {call} is nothing the check can set "
                                       f"(not a delegate attribute, parameter or local bound from one)", mode)
    # The method under test is the one that holds the call (a subclass may not override it).
    bound = raw.__get__(inst, type(inst)) if mkind == "method" else getattr(cls, fn_info.name)
    args, kwargs = _standin_args(wsig, skip_first=(mkind == "method"), given=given)
    start = time.perf_counter()
    _, exc = _call(loader, bound, args, kwargs)
    log = delegate_log(delegate)
    facts = {"method": f"{short(cq)}.{fn_info.name}", "receiver": planted,
             "receiver_attr": _receiver_attr(recv, self_name, attrs) if not on_self else None,
             "on_self": on_self,
             "stand_in_signature": fmt_sig(f"{short(owner)}.{member}", osig), "signature_from": how_sig,
             "owner_load_mode": owner_mode, "call_seconds": round(time.perf_counter() - start, 6)}
    expected = stated.error
    if log.bind_errors:
        text = log.bind_errors[0]
        facts["error"] = f"TypeError: {text}"
        same = "" if not expected or expected == text else f" (the static check predicted: {expected})"
        detail = (f"calling the real `{short(cq)}.{fn_info.name}` with `{planted[0]}` = stand-in "
                  f"`{fmt_sig(short(owner) + '.' + member, osig)}` raised TypeError: {text}{same}")
        plan = None
        if okind == "method":
            def make_front(backend: Any) -> tuple[Any, tuple]:
                front, given_g, _ = build(backend)
                if mkind == "method" and fn_info.name == member and not given_g:
                    return front, ()
                meth = getattr(front, fn_info.name) if mkind == "method" else getattr(cls, fn_info.name)
                # The protocol calls hook(forward_batch): it goes to the method's first required
                # parameter that is not the planted receiver.
                names = [p.name for p in (list(wsig.parameters.values())[1 if mkind == "method" else 0:]
                                          if wsig is not None else [])
                         if p.default is inspect.Parameter.empty and p.name not in given_g
                         and p.kind in (inspect.Parameter.POSITIONAL_ONLY,
                                        inspect.Parameter.POSITIONAL_OR_KEYWORD)]

                def hook(forward_batch: Any, *rest: Any) -> Any:
                    g = dict(given_g)
                    if names:
                        g[names[0]] = forward_batch
                    a, kw = _standin_args(wsig, skip_first=(mkind == "method"), given=g)
                    return meth(*a, **kw)

                ns = Namespace()
                setattr(ns, member, hook)
                return ns, ()

            plan = GpuPlan(member, osig, short(owner), make_front, f"real {short(cq)}.{fn_info.name}", owner)
        return Outcome("fact", detail, mode, facts, plan)
    if log.ran:
        a, k = log.attempts[0] if log.attempts else ((), {})
        return Outcome("not-reproduced",
                       f"the call bound: the real `{short(cq)}.{fn_info.name}` called stand-in "
                       f"`{fmt_sig(short(owner) + '.' + member, osig)}` with {len(a)} positional and "
                       f"{len(k)} keyword argument(s) and it accepted them", mode, facts)
    if exc is not None:
        return Outcome("unverifiable", f"the real `{short(cq)}.{fn_info.name}` raised {one_line(exc)} "
                                       f"before reaching the call at line {call_line} (stand-in arguments)",
                       mode, facts)
    return Outcome("unverifiable", f"the call at line {call_line} was not reached when the real "
                                   f"`{short(cq)}.{fn_info.name}` ran with stand-in arguments", mode, facts)


# --------------------------------------------------------------------------------------------
# AL003
# --------------------------------------------------------------------------------------------

@replays(WrapperInheritsNoopDefault)
def verify_al003(finding: Finding, ctx, loader: TreeLoader) -> Outcome:
    wq, member = finding.class_name, finding.member
    lc, err = tree_class(ctx, loader, wq)
    if err:
        return Outcome("unverifiable", err, lc.mode if lc else "failed", {"load_problem": True})
    cls, mode = lc.cls, lc.mode
    noop = NoopDefaultFacts.of(finding)
    base = noop.base or ""
    blc, berr = tree_class(ctx, loader, base)
    if berr:
        return Outcome("unverifiable", berr, mode, {"load_problem": True})
    base_raw = vars(blc.cls).get(member, _MISSING)
    if base_raw is _MISSING:
        return Outcome("not-reproduced", f"the loaded `{short(base)}` does not define `{member}`", mode)

    delegate = make_delegate(member, class_name=(short(finding.targets[0])
                                                 if finding.targets else "StandinDelegate"), permissive=True)
    inst = new_instance(cls)
    populate(ctx, wq, inst)
    planted = plant_delegates(inst, delegate_attrs(ctx, wq, noop.delegates), delegate)
    owner_cls = _static_owner(inst, member)
    resolved = vars(owner_cls)[member] if owner_cls is not None else _MISSING
    facts = {"resolved_from": owner_cls.__name__ if owner_cls else None, "delegates": planted}
    if resolved is not base_raw:
        where = owner_cls.__name__ if owner_cls else "nowhere"
        return Outcome("not-reproduced", f"`{member}` on a real `{short(wq)}` resolves to `{where}.{member}`, "
                                         f"not the base's `{short(base)}.{member}`", mode, facts)
    try:
        bound = getattr(inst, member)
    except Exception as exc:
        return Outcome("unverifiable", f"getattr(w, {member!r}) raised {one_line(exc)}", mode, facts)
    base_fn = base_raw.__func__ if isinstance(base_raw, (staticmethod, classmethod)) else base_raw
    try:
        sig = inspect.signature(base_fn)
    except (TypeError, ValueError):
        sig = None
    args, kwargs = _standin_args(sig, skip_first=not isinstance(base_raw, staticmethod))
    result, exc = _call(loader, bound, args, kwargs)
    log = delegate_log(delegate)
    if log.attempts or log.ran:
        return Outcome("not-reproduced", f"calling `{member}` on a real `{short(wq)}` reached the delegate's hook",
                       mode, facts)
    placeholder = noop.default == "placeholder"
    if placeholder:
        # The claim is a crash: the call raises NotImplementedError where the delegate would run.
        if isinstance(exc, NotImplementedError):
            facts["static_fact"] = "placeholder-reached"
            return Outcome("fact", f"`{member}` on a real `{short(wq)}` is `{short(base)}.{member}`; calling it "
                                   f"raised {one_line(exc)} and the stand-in hook on {', '.join(planted)} never "
                                   f"ran", mode, facts)
        if exc is None:
            return Outcome("not-reproduced", f"calling `{short(base)}.{member}` on a real `{short(wq)}` returned "
                                             f"without raising NotImplementedError", mode, facts)
    if exc is not None:
        return Outcome("unverifiable", f"calling the base's `{short(base)}.{member}` raised {one_line(exc)}",
                       mode, facts)
    shown = "None" if result is None else type(result).__name__
    return Outcome("fact", f"`{member}` on a real `{short(wq)}` is the base's `{short(base)}.{member}`; "
                                f"calling it returned {shown} and the stand-in hook on {', '.join(planted)} "
                                f"never ran", mode, facts)


__all__ = ["REPLAYS", "Outcome", "GpuPlan", "verify_al001", "verify_al002", "verify_al003", "new_instance",
           "set_attr"]
