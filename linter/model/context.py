"""What rules see: the tree index, the resolver, the family model, and the use sites by member."""

from __future__ import annotations

import ast
import builtins
import functools
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TypeVar

from ..findings import Evidence, shortened
from ..perfile.summary import CallSite, Probe
from ..refs import base_of, class_values, is_attr, is_call, is_getattr, is_name, is_self, type_alternatives
from .facts import Site
from .families import FamilyModel
from .holding_tests import kind_tests_at
from .index import TreeIndex
from .passes import TreeModel, run_passes
from .resolve import NOTHING, Resolution, Resolver
from .uses import Reached, Use

T = TypeVar("T")


@dataclass
class Context:
    """What a rule is handed: the tree model every pass built (`tree`: passes.py), with the
    layers rules read most under short names, and the questions they ask of it.

    - Layers: `index` (TreeIndex: names, classes, members), `resolver` (Resolver: what a
      reference can be), `model` (FamilyModel: families, wrappers, delegates), `probes` (member ->
      its probe sites), `member_calls` (member -> its call sites).
    - Questions: `receiver_types` (a receiver's types, astroid asked only where the index has no
      answer), `reaching` (the uses whose receiver can be a given wrapper), `can_be`, `kind_tested`
      (a local typed by the `isinstance` test holding where it is used), `defined_names`.
    - `state(owner, make)`: per-run state a signal or rule keeps between findings.
    """
    tree: TreeModel  # every layer the passes made (passes.py)
    probes: dict[str, list[tuple[Site, Probe]]] = field(default_factory=dict)
    fallback: object | None = None  # an AstroidBridge, asked only where the index has no answer
    _memo: dict = field(default_factory=dict)
    _state: dict = field(default_factory=dict)  # Context.state: per-run state by its owner

    # Member calls whose target may vary by design, and calls on `self` attributes by class
    # (see facts.ModuleFacts).
    optional_candidates: list[tuple[Site, CallSite, tuple]] = field(default_factory=list)
    self_attr_calls: dict[str, list[tuple[Site, CallSite, tuple]]] = field(default_factory=dict)

    @classmethod
    def build(cls, index: TreeIndex, fallback=None) -> Context:
        tree = run_passes(index)
        ctx = cls(tree, fallback=fallback)
        for f in tree.facts.values():
            for member, entries in f.probes.items():
                ctx.probes.setdefault(member, []).extend(entries)
            ctx.optional_candidates.extend(f.optional_candidates)
            ctx.self_attr_calls.update(f.self_attr_calls)
        return ctx

    # The layers rules read most, by their short names.
    @property
    def index(self) -> TreeIndex:
        return self.tree.index

    @property
    def resolver(self) -> Resolver:
        return self.tree.resolver

    @property
    def model(self) -> FamilyModel:
        return self.tree.families

    @property
    def member_calls(self) -> dict[str, list[tuple[Site, CallSite, tuple]]]:
        return self.tree.calls.member_calls

    def state(self, owner: object, make: Callable[[], T]) -> T:
        """The run's state kept for `owner` (a signal's or a rule's class, or the function that
        owns it): what it derives from the tree, made by `make` on first use and reused for every
        finding after. Keyed by the owner object itself, so two owners can never share a slot."""
        hit = self._state.get(owner)
        if hit is None:
            hit = self._state[owner] = make()
        return hit

    def receiver_types(self, site: Site, ref: tuple | None, line: int = 0, col: int = 0,
                       kind: str = "") -> Resolution:
        """Types of a receiver; falls back to astroid (bounded) when the index has no answer."""
        # The module is part of the key: identical files in two modules may share one summary.
        key = (site.module, id(site.fn), ref, line, col)
        if key in self._memo:
            return self._memo[key]
        res = self.resolver.resolve(ref, site.scope) if ref is not None else NOTHING
        if ref is not None and is_name(ref) and len(res.instances()) > 1:
            res = self._union_narrowed(site, ref[1]) or res
        if not res.instances() and kind == "call" and ref is not None and is_name(ref):
            # Calls only: a probe of an unannotated parameter is mostly duck typing over whatever
            # comes in (`if hasattr(x, "a"): ... elif ...: else: raise`), a call is a use.
            res = self.tree.param_callers.resolve(site, ref[1])
        if not res.instances() and self.fallback is not None and line \
                and _calls_tree_code(ref, self.defined_names, lambda name: self._binds(site, name)):
            res = self.fallback.infer(site, line, col, kind) or res
        self._memo[key] = res
        return res

    def _union_narrowed(self, site: Site, name: str) -> Resolution | None:
        """A parameter annotated with a union (`backend: A | B`) of a function whose every call
        the tree shows is what those calls pass: a helper shared by two kinds of object in its
        annotation may be called with one kind only (a twin helper serving the other), and its
        probes then never meet the other kind."""
        fn = site.fn
        param = next((p for p in fn.params if p.name == name), None)
        if param is None or type_alternatives(param.annotation) is None or name in fn.locals \
                or (site.cls is not None and fn.params[0] is param):
            return None
        got = self.tree.passed_values.passed_to(site.scope, param)
        if got is None or not got.values or not all(isinstance(t, str) for t in got.values):
            return None
        passed = frozenset(got.values)
        shown = ", ".join(sorted(t.rsplit(".", 1)[-1] for t in passed))
        note = (f"`{name}` is annotated `{self.resolver.annotation_text(param.annotation)}`, but every call "
                f"of `{fn.name}` in the tree passes {shown}")
        return Resolution(passed, (Evidence(site.path, fn.line, note), *shortened(got.steps, 3)))

    @functools.cached_property
    def defined_names(self) -> frozenset[str]:
        """Every function, method and class name the tree defines (see _calls_tree_code)."""
        names = set()
        for mod in self.index.modules.values():
            names.update(mod.summary.functions)
            for qual, info in mod.summary.classes.items():
                names.add(qual.rsplit(".", 1)[-1])
                names.update(info.methods)
        return frozenset(names)

    def _binds(self, site: Site, name: str) -> bool:
        """Whether `name` is bound where `site` runs (the function's locals, the module's imports,
        definitions and globals) rather than left to the builtins."""
        if name in site.fn.locals:
            return True
        mod = self.index.modules.get(site.module)
        if mod is None:
            return True
        summary = mod.summary
        return (name in summary.functions or name in summary.globals
                or any(i.local == name or (i.name == "*") for i in summary.imports)
                or any(q.rsplit(".", 1)[-1] == name for q in summary.classes))

    def reaching(self, wq: str, uses: Iterable[Use]) -> Iterator[Reached]:
        """The uses whose receiver can be wrapper `wq`. A wrapper reading its own delegates, and
        code that unwraps wrappers, never reach a wrapper."""
        model = self.model
        for site, recv, line, col, kind, item in uses:
            if model.via_unwrapper(site.fn, site.scope, recv, wq):
                continue
            if model.is_wrapper_internal(site.cls, site.fn, recv):
                # ...unless the tree hands `wq` to the parameter it reads: `Outer(Split(...))`
                # with `getattr(inner, "max_len", None)` in `Outer.__init__`.
                given = model.wrappers_given(site.cls, site.fn, recv).get(wq)
                if given is None:
                    continue
                res = self.receiver_types(site, recv, line if kind == "probe" else 0, col, kind)
                res = Resolution(res.types | {wq}, (*shortened(res.steps, 3), given), res.via)
                yield Reached(item, res, self.can_be(res, wq, site, recv))
                continue
            res = self.receiver_types(site, recv, line if kind == "probe" else 0, col, kind)
            if not res.instances() and recv is not None and is_name(recv):
                res = self.kind_tested(site, recv[1], line) or res
            static = self.can_be(res, wq, site, recv)
            if static:
                yield Reached(item, res, static)

    def kind_tested(self, site: Site, name: str, line: int) -> Resolution | None:
        """A local the index cannot type, used where `isinstance(name, C)` holds (inside `if
        isinstance(q, Base):`, after `if not isinstance(q, Base): return`): an instance of C.
        (`q = getattr(layer, "quant_method", None)`, then the test, then `q.process(layer)`.)"""
        key = ("kind", site.module, id(site.fn), name, line)
        if key in self._memo:
            return self._memo[key]
        out = None
        mod = self.index.modules.get(site.module)
        tests = kind_tests_at(self.tree.text, site.scope, mod.file.path, line) if mod is not None else []
        for subject, kinds, at in tests:
            if not (isinstance(subject, ast.Name) and subject.id == name):
                continue
            named = kinds.elts if isinstance(kinds, ast.Tuple) else [kinds]
            quals = [self.resolver.resolve(("name", n.id) if isinstance(n, ast.Name) else None, site.scope)
                     for n in named]
            classes = frozenset(q for r in quals for q in class_values(r.types))
            if classes and all(r.types for r in quals):
                shown = ", ".join(sorted(c.rsplit(".", 1)[-1] for c in classes))
                # The test says what kind the object is, not which class the code built there.
                out = Resolution(classes, (Evidence(site.path, at, f"`{name}` is tested `isinstance(..., {shown})` "
                                                                   f"where it is used", declared=True),))
        self._memo[key] = out
        return out

    def can_be(self, res: Resolution, qual: str, site: Site | None = None, ref: tuple | None = None) -> str | None:
        """The static type in `res` that admits an instance of `qual`, if any.

        A probe of `self` inside method M of class C sees an instance of `qual` only when `qual`
        runs that very M: a class overriding M never reaches the probe.
        """
        if site is not None and site.cls and ref is not None and site.fn.params \
                and is_self(ref, site.fn.params[0].name):
            hit = self.index.lookup(qual, site.fn.name)
            if hit is None or hit.owner != site.cls:
                return None
        mro = self.index.mro(qual)
        for t in sorted(res.instances()):
            if t in mro:
                return t
        return None



_BUILTINS = frozenset(dir(builtins))


def _calls_tree_code(ref, defined: frozenset[str], binds) -> bool:
    """Whether a receiver is built from a call whose result astroid could type as one of the tree's
    classes: receivers built from a call are where the index is weakest and astroid's inference
    earns its cost (plain names and attributes are not sent). astroid answers only with classes of
    the tree, so the call must run tree code: a name the tree defines (a function, a method, a
    class), or something unnamed (a registry's entry, a factory's result). A call only of names
    defined elsewhere (`next(...)`, `x.parameters()`, `getattr(x, name)`) returns what that code
    builds; each such query cost a good part of a second and could not answer. A plain name the
    calling module does not bind (`binds`) is a builtin's (`next(...)`), whatever the tree defines
    elsewhere under that name."""
    while isinstance(ref, tuple) and ref:
        if is_call(ref):
            func = ref[1]
            if not (isinstance(func, tuple) and func and (is_name(func) or is_attr(func) or is_getattr(func))):
                return True
            if func[-1] in defined and not (is_name(func) and func[1] in _BUILTINS and not binds(func[1])):
                return True
        elif base_of(ref) is None:
            return False
        ref = ref[1]
    return False
