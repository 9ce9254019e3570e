"""Does the code's own construction path build the wrapper around that implementation?

A finding rests on a pairing: wrapper ``W`` holding implementation ``I`` (construction_sites.py
says where the code builds ``W`` and which functions reach that place). Here those functions run,
for real, in the verification child, with stand-ins (standins.Standin) only for their inputs:
the model runner, configs, server arguments, tensors. Every class is the real one and every
``__init__`` on the way runs as written; ``W``'s and ``I``'s are watched (instances.Constructions).

The inputs are not guessed once: where the code decides on them, each decision is explored.

* ``if runner.flag:`` on a stand-in: both branches, one run each;
* ``name == "flashinfer"`` against one of the code's own constants: the input is that value, or not
  (and stays so for the rest of the run: ``name != "flashinfer"`` later agrees);
* a registry lookup with a stand-in key (``REGISTRY[name]``, ``name in REGISTRY``,
  ``REGISTRY.get(name)``; a registry is a module-level dict of the tree mapping names to classes or
  functions): each key, the keys leading to ``I`` first, and a key it does not hold.

Runs follow each other over those choice points, the default path first, then the paths that
depart from it at one decision, then at two (at most ``MAX_RUNS`` per function).
The pairing is **reproduced** when some run builds ``W`` with a real ``__init__`` that finishes and
leaves an instance of ``I`` in the delegate attribute. It is **not reproduced** only when every
choice was explored, no run stopped on something a stand-in cannot model (a class test such as
``isinstance(config, SomeConfig)``, iteration over an input, an error a stand-in caused rather than
the code's own ``raise`` or ``assert``), and still no run built that pairing. Anything else is
**unverifiable**, with what stopped it. A pairing needing a model's own config class (``isinstance``
on a stand-in is always False) is therefore never claimed either way: the check does not invent
configs.
"""

from __future__ import annotations

import inspect
import itertools
import linecache
import os
import sys
import time
import traceback
from dataclasses import dataclass, field
from typing import Any

from ..linter.findings import short, unlabelled
from ..linter.refs import is_call, is_name
from .construction_sites import Entry, Site, mentioning, sites_for
from .instances import Constructions, new_instance
from .loader import LoadTimeout, TreeLoader, one_line, silenced
from .standins import Standin, is_standin, set_explorer, standin_name

MAX_RUNS = 160  # runs per function (each takes milliseconds once the modules are loaded)
RUN_TIME_LIMIT = 4.0  # seconds for one run of one function
PAIRING_TIME_LIMIT = 30.0  # seconds for all runs of one pairing
_LITERALS = (str, int, float, bytes, bool, type(None))
_MISSING = object()


@dataclass
class PairingResult:
    status: str  # reproduced | not-reproduced | unverifiable
    detail: str
    facts: dict[str, Any] = field(default_factory=dict)


# --------------------------------------------------------------------------------------------
# choice points
# --------------------------------------------------------------------------------------------

class Explorer:
    """The decisions of one run: follows ``schedule`` (option indices), then takes option 0."""

    def __init__(self, schedule: list[int]):
        self.schedule = schedule
        self.trail: list[tuple[int, int]] = []  # (options, taken) per decision
        self.said: list[str] = []  # each decision as text
        self.values: dict[int, Any] = {}  # id(stand-in) -> the value it was found equal to
        self.unequal: dict[int, set] = {}  # id(stand-in) -> values it was found different from
        self.truths: dict[int, bool] = {}
        self.members: dict[tuple[int, Any], bool] = {}
        self.notes: list[str] = []  # tests a stand-in could not answer for a real input
        self._keep: list[Any] = []  # the stand-ins decided on (their ids must stay theirs)

    def choose(self, options: int) -> int:
        i = len(self.trail)
        taken = min(self.schedule[i] if i < len(self.schedule) else 0, options - 1)
        self.trail.append((options, taken))
        return taken

    def truth(self, s: Standin) -> bool:
        key = id(s)
        if key in self.values:
            return bool(self.values[key])
        if key not in self.truths:
            self._keep.append(s)
            self.truths[key] = self.choose(2) == 1
            self.said.append(f"`{standin_name(s)}` {'true' if self.truths[key] else 'false'}")
        return self.truths[key]

    def equals(self, s: Standin, other: Any) -> bool:
        if s is other:
            return True
        key = id(s)
        if is_standin(other):
            if key in self.values and id(other) in self.values:
                return self.values[key] == self.values[id(other)]
            return False
        if key in self.values:
            return self.values[key] == other
        if not isinstance(other, _LITERALS) or other in self.unequal.get(key, ()):
            return False
        self._keep.append(s)
        if self.choose(2) == 1:
            self.values[key] = other
            self.said.append(f"`{standin_name(s)}` = {other!r}")
            return True
        self.unequal.setdefault(key, set()).add(other)
        self.said.append(f"`{standin_name(s)}` != {other!r}")
        return False

    def contains(self, s: Standin, item: Any) -> bool:
        """``item in s``: a choice point for the code's own constants, like ``==``."""
        if not isinstance(item, _LITERALS):
            self.unmodelled(s, "`in`")
            return False
        key = (id(s), item)
        if key not in self.members:
            self._keep.append(s)
            self.members[key] = self.choose(2) == 1
            self.said.append(f"{item!r} {'in' if self.members[key] else 'not in'} `{standin_name(s)}`")
        return self.members[key]

    def hash_of(self, s: Standin) -> int:
        key = id(s)
        return hash(self.values[key]) if key in self.values else key

    def pick_key(self, s: Standin, registry: ChoiceDict) -> Any:
        key = id(s)
        if key in self.values:
            return self.values[key]
        options = [k for k in registry.order if k not in self.unequal.get(key, ())] + [_MISSING]
        self._keep.append(s)
        picked = options[self.choose(len(options))]
        if picked is _MISSING:
            self.unequal.setdefault(key, set()).update(registry.order)
            self.said.append(f"`{standin_name(s)}` not a key of `{registry.label}`")
            return s
        self.values[key] = picked
        self.said.append(f"`{standin_name(s)}` = {picked!r} (a key of `{registry.label}`)")
        return picked

    def unmodelled(self, s: Standin, what: str) -> None:
        note = f"{what} on `{standin_name(s)}`"
        if note not in self.notes:
            self.notes.append(note)


class ChoiceDict(dict):
    """A registry while a construction path runs: a stand-in key is each of its keys in turn."""

    label: str
    _rank: Any  # key -> sort key: the keys leading to the wanted classes first
    _order: list | None = None

    @property
    def order(self) -> list:
        if self._order is None:
            self._order = sorted(self, key=self._rank)
        return self._order

    def _key(self, key: Any) -> Any:
        from . import standins
        explorer = standins.EXPLORER
        if explorer is not None and is_standin(key):
            return explorer.pick_key(key, self)
        return key

    def __getitem__(self, key: Any) -> Any:
        return dict.__getitem__(self, self._key(key))

    def __contains__(self, key: Any) -> bool:
        return dict.__contains__(self, self._key(key))

    def get(self, key: Any, default: Any = None) -> Any:
        return dict.get(self, self._key(key), default)


class Registries:
    """The tree's registries (module-level dicts of string keys whose values include classes or the
    tree's functions), swapped for ChoiceDicts while a run goes and put back after."""

    def __init__(self, ctx, loader: TreeLoader, wanted: set[str]):
        self.loader = loader
        self.wanted = wanted
        self.short_wanted = {w.rsplit(".", 1)[-1] for w in wanted}
        self._builds = _what_functions_build(ctx)
        self._choice: dict[int, tuple[dict, ChoiceDict | None]] = {}  # id(original) -> (original, choice)
        self._places: list[tuple[dict, str, dict]] = []  # (module dict, name, original)
        self._scanned: set[str] = set()

    def _scan(self) -> None:
        for mname, mod in list(sys.modules.items()):
            if mname in self._scanned or mod is None or not self.loader.in_tree(mname):
                continue
            self._scanned.add(mname)
            g = getattr(mod, "__dict__", None)
            if not isinstance(g, dict):
                continue
            for name, value in list(g.items()):
                if type(value) is not dict:
                    continue
                known = self._choice.get(id(value))
                if known is None:
                    cd = None
                    if self._is_registry(value):
                        cd = ChoiceDict(value)
                        cd.label = name
                        cd._rank = lambda k, d=value: (not self._leads_to(d[k]), str(k))
                    known = self._choice[id(value)] = (value, cd)
                if known[1] is not None:
                    self._places.append((g, name, value))

    def install(self) -> None:
        self._scan()
        for g, name, original in self._places:
            if g.get(name) is original:
                g[name] = self._choice[id(original)][1]

    def restore(self) -> None:
        for g, name, original in self._places:
            if g.get(name) is self._choice[id(original)][1]:
                g[name] = original

    def _is_registry(self, d: dict) -> bool:
        if len(d) < 2 or not all(isinstance(k, str) for k in d):
            return False
        return any(isinstance(v, type) or (callable(v) and self.loader.in_tree(getattr(v, "__module__", "") or ""))
                   for v in d.values())

    def _leads_to(self, value: Any) -> bool:
        """Whether a registry value is one of the wanted classes or a function of the tree that
        builds or returns one (read from its summary)."""
        if isinstance(value, type):
            return any(f"{getattr(k, '__module__', '')}.{k.__qualname__}" in self.wanted
                       or k.__qualname__ in self.short_wanted for k in value.__mro__)
        key = (getattr(value, "__module__", None), getattr(value, "__name__", None))
        return bool(self._builds.get(key, frozenset()) & self.short_wanted)


def _what_functions_build(ctx) -> dict[tuple[str, str], frozenset[str]]:
    """(module, function) -> the class names its summary constructs or returns a call of."""
    return ctx.state(_what_functions_build, lambda: _builds(ctx))


def _builds(ctx) -> dict[tuple[str, str], frozenset[str]]:
    out = {}
    for mod in ctx.index.modules.values():
        for fname, fn in mod.summary.functions.items():
            built = {c[0][1].rsplit(".", 1)[-1] for c in fn.constructions if is_name(c[0])}
            built |= {r[1][1].rsplit(".", 1)[-1] for r in fn.return_values if is_call(r) and is_name(r[1])}
            if built:
                out[(unlabelled(mod.name), fname)] = frozenset(built)
    return out


# --------------------------------------------------------------------------------------------
# one run
# --------------------------------------------------------------------------------------------

@dataclass
class Run:
    built: list  # instances.Built of the watched classes
    error: BaseException | None
    explicit: bool  # the error is the code's own raise/assert (a refusal), not a stand-in's limit
    explorer: Explorer
    where: str = ""  # file:line of the error


def _callable(ctx, loader: TreeLoader, entry: Entry) -> tuple[Any, str | None]:
    """The entry's function, bound where it is a method (to an instance made without __init__,
    its attributes stand-ins), or None and why."""
    from .scenarios import populate, tree_class

    if entry.cls is None:
        lm = loader.load(entry.module)
        fn = getattr(lm.module, entry.function, None) if lm.module is not None else None
        if fn is None:
            return None, f"cannot load `{entry.function}` from {entry.module}: {lm.error or 'not defined'}"
        return fn, None
    lc, err = tree_class(ctx, loader, entry.cls)
    if err:
        return None, err
    raw = None
    for k in lc.cls.__mro__:
        if entry.function in vars(k):
            raw = vars(k)[entry.function]
            break
    if raw is None:
        return None, f"the loaded `{short(entry.cls)}` has no `{entry.function}`"
    if isinstance(raw, staticmethod):
        return raw.__func__, None
    if isinstance(raw, classmethod):
        return raw.__get__(None, lc.cls), None
    if isinstance(raw, property) or not callable(raw):
        return None, f"`{entry.label}` is not a method"
    inst = new_instance(lc.cls)
    populate(ctx, entry.cls, inst)
    return raw.__get__(inst, lc.cls), None


def _arguments(fn: Any) -> tuple[list, dict]:
    """A stand-in for every parameter: the function's inputs are what the check does not know."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return [], {}
    args, kwargs = [], {}
    for p in sig.parameters.values():
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            args.append(Standin(p.name))
        elif p.kind is p.KEYWORD_ONLY:
            kwargs[p.name] = Standin(p.name)
    return args, kwargs


def _explicit(exc: BaseException, tree_paths: set[str]) -> tuple[bool, str]:
    """Whether the innermost frame of the tree raised it with its own `raise` or `assert`."""
    frames = traceback.extract_tb(exc.__traceback__)
    for fr in reversed(frames):
        if os.path.realpath(fr.filename) in tree_paths:
            line = (fr.line or linecache.getline(fr.filename, fr.lineno)).strip()
            where = f"{os.path.basename(fr.filename)}:{fr.lineno}"
            return line.startswith(("raise", "assert")) or isinstance(exc, AssertionError), where
    return False, ""


def _run_once(fn: Any, loader: TreeLoader, watch: list[type], registries: Registries, schedule: list[int],
              tree_paths: set[str], limit: float = RUN_TIME_LIMIT, keep: frozenset = frozenset()) -> Run:
    """One run of ``fn`` along ``schedule``. ``keep``: implementation classes built without their
    ``__init__`` even though they derive from the wrapper (the object case)."""
    import asyncio

    explorer = Explorer(schedule)
    skip = _heavy(watch[0], loader, keep)
    watcher = Constructions(list(dict.fromkeys([*watch, *skip])), frozenset(skip))
    args, kwargs = _arguments(fn)
    error = None
    registries.install()
    watcher.install()
    previous = set_explorer(explorer)
    try:
        with silenced(), loader._deadlines.limit(limit):
            result = fn(*args, **kwargs)
            if inspect.iscoroutine(result):
                result = asyncio.new_event_loop().run_until_complete(result)
            elif inspect.isgenerator(result):
                result = list(itertools.islice(result, 1000))
    except KeyboardInterrupt:
        raise
    except BaseException as exc:
        error = exc
    finally:
        set_explorer(previous)
        watcher.restore()
        registries.restore()
    explicit, where = (False, "")
    if error is not None and not isinstance(error, LoadTimeout):
        explicit, where = _explicit(error, tree_paths)
    return Run(list(watcher.built), error, explicit, explorer, where)


def _heavy(wcls: type, loader: TreeLoader, also: frozenset) -> list[type]:
    """The loaded classes of the wrapper's family whose constructors are not run: all but the
    wrapper's ancestors and subclasses (whose ``__init__`` decides what the delegate holds), plus
    ``also``. The family is found from the wrapper's topmost tree ancestors down through
    ``__subclasses__()``, so classes a path imports are covered from the next run on."""
    ancestors = set(wcls.__mro__)
    tree = [k for k in wcls.__mro__ if loader.in_tree(getattr(k, "__module__", "") or "")]
    tops = [k for k in tree if not any(b in tree for b in k.__bases__)]
    out, todo, seen = [], list(tops), set()
    while todo:
        k = todo.pop()
        try:
            subs = type.__subclasses__(k)
        except TypeError:
            continue
        for sub in subs:
            if id(sub) in seen:
                continue
            seen.add(id(sub))
            todo.append(sub)
            if sub in also or (sub not in ancestors and not issubclass(sub, wcls)):
                out.append(sub)
    return out


class Search:
    """Limited discrepancy search over the choice points: the default run first, then every run
    that departs from it at one decision, then at two, ... A constructor path is usually reached
    by a few decisions (a registry key, a flag), which this finds long before a depth-first walk
    that exhausts the last decision's alternatives first would."""

    def __init__(self) -> None:
        import heapq
        self._heap: list[tuple[int, int, list[int]]] = [(0, 0, [])]
        self._push = heapq.heappush
        self._pop = heapq.heappop
        self._n = 0

    def next(self) -> list[int] | None:
        return self._pop(self._heap)[2] if self._heap else None

    def ran(self, schedule: list[int], trail: list[tuple[int, int]]) -> None:
        """Queue the runs departing from this one at one decision past its forced prefix."""
        base = [taken for _, taken in trail]
        discrepancies = sum(1 for x in schedule if x)
        for i in range(len(schedule), len(trail)):
            options, taken = trail[i]
            for k in range(1, options):
                self._n += 1
                self._push(self._heap, (discrepancies + 1, self._n, base[:i] + [k]))

    @property
    def exhausted(self) -> bool:
        return not self._heap


# --------------------------------------------------------------------------------------------
# the check
# --------------------------------------------------------------------------------------------

def check_pairing(ctx, loader: TreeLoader, wrapper: str, attr: str | None, impls: list[str],
                  time_limit: float = PAIRING_TIME_LIMIT) -> PairingResult:
    """Run the construction paths of ``wrapper`` until one builds it around one of ``impls`` in
    ``attr`` (``attr`` None: an object of one of ``impls`` is built by the wrapper's path)."""
    from .scenarios import tree_class

    start = time.monotonic()
    lw, err = tree_class(ctx, loader, wrapper)
    if err:
        return PairingResult("unverifiable", f"cannot load the wrapper: {err}")
    impl_classes = []
    for q in impls:
        lc, ierr = tree_class(ctx, loader, q)
        if not ierr:
            impl_classes.append(lc.cls)
    if not impl_classes:
        return PairingResult("unverifiable", f"cannot load {', '.join(f'`{short(q)}`' for q in impls)}")
    impl_names = ", ".join(f"`{short(q)}`" for q in impls[:3]) + (" ..." if len(impls) > 3 else "")
    sites = sites_for(ctx, wrapper, attr)
    if attr is None:
        sites = sites + _registry_sites(ctx, loader, wrapper, impl_classes)
    what = (f"a real `{short(wrapper)}` whose `self.{attr}` holds a real {impl_names}" if attr
            else f"a real {impl_names}")
    if not sites:
        return PairingResult("unverifiable", f"no construction of `{short(wrapper)}` is seen in the tree")
    tree_paths = {os.path.realpath(f.path) for f in loader.files.values()}
    watch = [lw.cls, *impl_classes]
    # The wrapper's own __init__ (and its subclasses': they run it through super()) is the path;
    # in the object case the implementation is the class under check, built without its __init__.
    keep = frozenset(impl_classes) if attr is None else frozenset()
    registries = Registries(ctx, loader, set(impls) | {wrapper})
    problems: list[str] = []
    notes: list[str] = []
    others: set[str] = set()
    runs_total = 0
    exhausted = True
    ran_any = False
    for site in sites:
        if site.problem:
            problems.append(site.problem)
            exhausted = False
            continue
        for entry in site.entries:
            fn, ferr = _callable(ctx, loader, entry)
            if fn is None:
                problems.append(f"`{entry.label}`: {ferr}")
                exhausted = False
                continue
            search = Search()
            schedule = search.next()
            runs = 0
            while schedule is not None:
                if runs >= MAX_RUNS or time.monotonic() - start > time_limit:
                    exhausted = False
                    problems.append(f"`{entry.label}`: stopped after {runs} runs (the limit), with choices left")
                    break
                # The first run loads the modules the path imports; it gets the loader's own time.
                limit = loader.time_limit if runs == 0 else RUN_TIME_LIMIT
                run = _run_once(fn, loader, watch, registries, schedule, tree_paths, limit, keep)
                runs += 1
                runs_total += 1
                ran_any = True
                hit = _pairing_in(run, lw.cls, attr, impl_classes)
                if hit is not None:
                    path = run.explorer.said
                    facts = {"entry": entry.label, "entry_path": f"{entry.path}:{entry.line}", "entry_why": entry.why,
                             "site": site.label, "path": path, "runs": runs_total, "built": hit}
                    how = f" with {'; '.join(path)}" if path else " (no input decided it)"
                    return PairingResult("reproduced", f"`{entry.label}` ({entry.path}:{entry.line}) built {what}{how} "
                                                       f"[{runs_total} run(s)]", facts)
                others |= _other_pairings(run, lw.cls, attr)
                for n in run.explorer.notes:
                    if n not in notes:
                        notes.append(n)
                if run.error is not None:
                    # Only paths that run to their end are evidence that the pairing is not built:
                    # a raise may be the code refusing a configuration, or a global it needs that
                    # this process never set up.
                    exhausted = False
                    text = f"`{entry.label}` raised {one_line(run.error)}" + (f" at {run.where}" if run.where else "")
                    if isinstance(run.error, LoadTimeout):
                        text = f"`{entry.label}` did not finish within {RUN_TIME_LIMIT:g} s"
                    if text not in problems:
                        problems.append(text)
                search.ran(schedule, run.explorer.trail)
                schedule = search.next()
    facts = {"runs": runs_total, "sites": [s.label for s in sites]}
    if others:
        facts["built_instead"] = sorted(others)
    built_else = f"; it built `{short(wrapper)}` around {', '.join(sorted(others))} instead" if others else ""
    if ran_any and exhausted and not notes:
        return PairingResult("not-reproduced", f"every path through the construction of `{short(wrapper)}` "
                                               f"({', '.join(s.label for s in sites)}; {runs_total} run(s), every "
                                               f"choice explored) never built {what}{built_else}", facts)
    why = []
    if notes:
        why.append("the path depends on inputs a stand-in cannot model: " + "; ".join(notes[:4]))
    why.extend(problems[:4])
    facts["stopped_by"] = why
    return PairingResult("unverifiable", f"the construction path did not build {what} "
                                         f"({runs_total} run(s)){built_else}: " + "; ".join(why), facts)


def _pairing_in(run: Run, wcls: type, attr: str | None, impl_classes: list[type]) -> str | None:
    """A description of the first construction of the pairing in this run, or None: the wrapper's
    real ``__init__`` ran to its end and left an implementation in the attribute (the object case:
    the code chose the implementation's class and built it, its heavy ``__init__`` not run)."""
    for b in run.built:
        if not b.finished:
            continue
        inst = b.instance
        if attr is None:
            if type(inst) in impl_classes:
                return type(inst).__name__
            continue
        if b.skipped or not isinstance(inst, wcls):
            continue
        held = inst.__dict__.get(attr, None) if hasattr(inst, "__dict__") else getattr(inst, attr, None)
        items = held if isinstance(held, (list, tuple)) else [held]
        for x in items:
            if not is_standin(x) and type(x) in impl_classes:
                return f"{type(inst).__name__}.{attr} = {type(x).__name__}"
    return None


def _other_pairings(run: Run, wcls: type, attr: str | None) -> set[str]:
    out = set()
    if attr is None:
        return out
    for b in run.built:
        if b.finished and isinstance(b.instance, wcls) and hasattr(b.instance, "__dict__"):
            held = b.instance.__dict__.get(attr)
            for x in (held if isinstance(held, (list, tuple)) else [held]):
                if x is not None and not is_standin(x):
                    out.add(f"`{type(x).__name__}`")
    return out


def _registry_sites(ctx, loader: TreeLoader, wrapper: str, impl_classes: list[type]) -> list[Site]:
    """Functions that read a registry mapping a key to one of the implementation classes (the
    object is built as ``REGISTRY[key](...)``): found on the loaded modules, read statically."""
    out: list[Site] = []
    wanted = {id(c) for c in impl_classes}
    for mname, mod in list(sys.modules.items()):
        if mod is None or not loader.in_tree(mname):
            continue
        for name, value in list(getattr(mod, "__dict__", {}).items()):
            if type(value) is dict and any(id(v) in wanted for v in value.values()):
                label = f"`{name}` in {mname}"
                qual = next((m.name for m in ctx.index.modules.values() if unlabelled(m.name) == mname), mname)
                entries = mentioning(ctx, qual, name, f"looks the class up in {label}")
                if entries:
                    out.append(Site(wrapper, None, entries[0].path, entries[0].line, label, tuple(entries)))
    return out
