"""Class families, wrappers and their delegates, found from the code alone.

A family is an in-tree root class with its descendants. A wrapper is a family member that holds
one or more instances of its own family (directly or in a list) in attributes that it reads
(calls or probes through them, or returns them), and forwards to them: it calls, probes or
`getattr`s members on those attributes, or hands on their attribute of its own member's name
(`return self.inner.supports_x` in a property `supports_x`). Nothing here knows a name from
any particular serving engine.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

from ..findings import Evidence, shortened, superseded
from ..perfile.summary import KEYWORD_ONLY, VAR_KEYWORD, VAR_POSITIONAL, FunctionInfo, member_target
from ..refs import (
    base_of,
    is_attr,
    is_call,
    is_getattr,
    is_item,
    is_name,
    is_self,
    is_seq,
    is_super_init,
    is_union,
    root_name,
    seq_of,
)
from .callgraph import CallGraph
from .facts import ModuleFacts, function_ref, mentions_self_attr
from .index import TreeIndex
from .passed_values import PassedValues
from .resolve import Resolution, Resolver, Scope, describe_type


@dataclass(slots=True)
class Delegate:
    attr: str
    types: frozenset[str]  # static classes the attribute holds (element classes for sequences)
    sequence: bool
    evidence: tuple[Evidence, ...]
    # Those of `types` it holds exactly, not a subclass: built by calling a class the code names
    # (see passed_values.py).
    exact: frozenset[str] = frozenset()


@dataclass(slots=True)
class Wrapper:
    qual: str
    delegates: list[Delegate]
    forwards: list[Evidence] = field(default_factory=list)
    forwarded: set[str] = field(default_factory=set)  # members it calls or probes on its delegates

    @property
    def attrs(self) -> set[str]:
        """The names of the attributes holding its delegates."""
        return {d.attr for d in self.delegates}

    def delegate_types(self) -> set[str]:
        out: set[str] = set()
        for d in self.delegates:
            out |= d.types
        return out

    def exact_types(self) -> frozenset[str]:
        """The delegate types held exactly by every delegate that can hold them."""
        exact: set[str] = set()
        wide: set[str] = set()
        for d in self.delegates:
            exact |= d.exact
            wide |= d.types - d.exact
        return frozenset(exact - wide)


class FamilyModel:
    """Class families, the wrappers among them and what their delegates can hold.

    A family is the classes under one in-tree root; a wrapper is a class of a family that holds
    others of it in attributes (its delegates) and forwards to them.

    - Families: `family_members` (class -> its family roots), `same_family`, `is_polymorphic`,
      `implementations` (every class an attribute of given static types can hold).
    - Wrappers and delegates: `wrappers` (qualified name -> Wrapper, each with its Delegates and
      the evidence for what they hold), `delegates_able_to_hold` (a wrapper's delegates that can hold
      a given class), `delegate_sources` (every construction that stores a delegate),
      `forwarded_to` / `forwards_own_name` (what a wrapper's methods reach on its delegates),
      `wrapper_ancestors`, `outermost`.
    - Members: `provides` (whether an instance really has a member), `members_provided`,
      `structural_members` / `family_structure` (delegate attribute names).
    - Receivers inside wrappers: `classes_read_from_own_attrs` (what a receiver in a wrapper's method can be),
      `reads_own_delegate` / `is_wrapper_internal` (a wrapper reading its own delegates is no
      probe of itself), `wrappers_given`, `unwrapping_functions` / `via_unwrapper` (code that
      looks through wrappers).
    """
    def __init__(self, index: TreeIndex, resolver: Resolver, facts: dict[str, ModuleFacts], calls: CallGraph,
                 passed_values: PassedValues):
        self.index = index
        self.resolver = resolver
        self.facts = facts  # module name -> what the passes below read from that module
        self.calls = calls
        self.passed_values = passed_values
        self._provided_memo: dict[tuple, dict[str, set[str]]] = {}
        self._implementations_memo: dict[tuple, tuple[tuple[str, ...], frozenset[str]]] = {}
        self._structure_memo: dict[str, frozenset[str]] = {}
        self._forwarding_memo: dict[tuple, tuple[list[Evidence], dict[str, Evidence]]] = {}
        self._attrs_memo: dict[str, tuple[frozenset[str], frozenset[str]]] = {}
        self._given_memo: dict[tuple, dict[str, Evidence]] = {}

    @cached_property
    def family_members(self) -> dict[str, frozenset[str]]:
        """Class -> the roots of the families it belongs to (only families of two or more classes)."""
        out: dict[str, frozenset[str]] = {}
        for qual in self.index.classes:
            roots = frozenset(r for r in self.index.roots(qual) if self.index.subclasses.get(r))
            if roots:
                out[qual] = roots
        return out

    def same_family(self, a: str, b: str) -> bool:
        ra, rb = self.family_members.get(a), self.family_members.get(b)
        return bool(ra and rb and ra & rb)

    def is_polymorphic(self, qual: str) -> bool:
        return bool(self.index.subclasses.get(qual))

    def implementations(self, types: set[str] | frozenset[str], exclude: str | None = None,
                        leaves_only: bool = True, nested: bool = True,
                        exact: frozenset[str] = frozenset()) -> list[str]:
        """Every class an attribute of these static types can hold: each type and its descendants.

        With `leaves_only`, a wrapper is held only where `types` names it (and not at all
        without `nested`): a delegate holds another wrapper only where the tree shows one given
        to it (a construction passing it, a factory returning it: see `_narrow_by_construction`),
        never because some wrapper descends from the delegate's annotation. Wrappers do nest (a
        prefill/decode split inside a hybrid wrapper and the reverse), but an annotation naming
        the family's root says nothing of which. A type in `exact` is that class alone (a
        delegate built by calling it: Wrapper.exact_types).
        """
        return list(self._implementations(types, exclude, leaves_only, nested, exact)[0])

    def _implementations(self, types, exclude, leaves_only, nested, exact) -> tuple[tuple[str, ...], frozenset[str]]:
        """implementations() in order, and as a set for membership (remembered: asked per pairing)."""
        key = (frozenset(types), exclude, leaves_only, nested, frozenset(exact))
        hit = self._implementations_memo.get(key)
        if hit is None:
            out: set[str] = set()
            for t in types:
                out.add(t)
                if t not in exact:
                    out |= self.index.descendants(t)
            if leaves_only:
                out -= self.wrappers.keys() - (types if nested else frozenset())
            out.discard(exclude)
            hit = self._implementations_memo[key] = (tuple(sorted(out)), frozenset(out))
        return hit

    def delegates_able_to_hold(self, w: Wrapper, impl: str) -> list[Delegate]:
        """The wrapper's delegates that can hold `impl` (nested wrappers included)."""
        return [d for d in w.delegates if impl in self._implementations(d.types, None, False, True, d.exact)[1]]

    def members_provided(self, impls: list[str]) -> dict[str, set[str]]:
        """Member name -> the classes that define it, over every implementation in `impls`.

        A wrapper among them provides a member only where it does more than hand the member on
        to its own delegates, or hands it to one that can provide it (`provides`): a split
        wrapper's `hook()` that calls `self.child.hook()` provides nothing when no child has it."""
        key = tuple(impls)
        hit = self._provided_memo.get(key)
        if hit is None:
            hit = {}
            for impl in impls:
                class_level, instance_level = self.index.member_table(impl)
                wrapper = impl in self.wrappers
                for name, (owner, _) in instance_level.items():
                    if name not in class_level and (not wrapper or self.provides(impl, name)):
                        hit.setdefault(name, set()).add(owner)
                for name, (owner, _) in class_level.items():
                    if not wrapper or self.provides(impl, name):
                        hit.setdefault(name, set()).add(owner)
            self._provided_memo[key] = hit
        return hit

    def provides(self, qual: str, member: str, depth: int = 0) -> bool:
        """Whether an instance of `qual` really has `member`: any class that defines it, except a
        wrapper whose definition only forwards the member to its own delegates (`return
        self.inner.member(...)`) while none of the classes those delegates hold provides it."""
        if self.index.lookup(qual, member) is None:
            return False
        if qual not in self.wrappers or depth > 3 or not self.forwards_own_name(qual, member):
            return True
        w = self.wrappers[qual]
        held = self.implementations(w.delegate_types(), exclude=qual, exact=w.exact_types())
        return any(self.provides(h, member, depth + 1) for h in held)

    def forwards_own_name(self, qual: str, member: str) -> bool:
        """Wrapper `qual`'s method (or property) `member` reaches `member` on its own delegates:
        calls or probes it there, or returns it read off one."""
        found = self.index.method(qual, member)
        if found is None or not found.fn.params:
            return False
        fn = found.fn
        for call in fn.calls:
            target = member_target(fn, call.func)
            if target and target[1] == member and self._own_delegate_in(qual, fn, target[0], 0):
                return True
        for probe in fn.probes:
            if probe.member == member and self._own_delegate_in(qual, fn, probe.receiver, 0):
                return True
        return any(v and (is_attr(v) or is_getattr(v)) and v[2] == member and self._own_delegate_in(qual, fn, v[1], 0)
                   for v in fn.return_values)

    @cached_property
    def structural_members(self) -> frozenset[str]:
        """Names of wrappers' delegate attributes (`full_attn_backend`, `primary`, ...).

        Probing one of these asks "is this a wrapper?", which is code unwrapping wrappers, not a
        hook: an implementation that happens to have an attribute of that name (FlashInfer's
        `prefill_backend = "fa2"`) is a name collision, never a hidden hook.
        """
        return frozenset(d.attr for w in self.wrappers.values() for d in w.delegates)

    def family_structure(self, qual: str) -> frozenset[str]:
        """Delegate attribute names of the wrappers in `qual`'s families."""
        hit = self._structure_memo.get(qual)
        if hit is None:
            hit = frozenset(d.attr for w in self.wrappers.values() if self.same_family(w.qual, qual)
                            for d in w.delegates)
            self._structure_memo[qual] = hit
        return hit

    @cached_property
    def unwrapping_functions(self) -> dict[tuple, frozenset[str]]:
        """Functions (by the resolver's name for them, facts.function_ref) that look through wrappers:
        they probe an object for a wrapper's delegate attribute (`hasattr(b, "full_attn_backend")`),
        or walk down through one (`b = b.full_attn_backend`). Values they return or probe have been unwrapped, so they
        are not taken to be wrappers. A wrapper reading its own delegates is forwarding."""
        names = self.structural_members
        out: dict[tuple, frozenset[str]] = {}
        for module, facts in self.facts.items():
            for hint in facts.unwrap_hints:
                own = self.wrappers[hint.cls].attrs if hint.cls in self.wrappers else ()
                found = {m for m, on_self in hint.probes if m in names and not (m in own and on_self)}
                if found:
                    found -= self._probed_off_other_kinds(module, hint.fn, found)
                found |= hint.steps & names
                if found:
                    out[function_ref(module, hint.cls, hint.fn)] = frozenset(found)
        return out

    def _probed_off_other_kinds(self, module: str, fn: FunctionInfo, members: set[str]) -> set[str]:
        """Members the function probes only on parameters annotated with a class outside the
        tree (`layer: torch.nn.Module`, then `getattr(layer, "quant_method", None)`): what it
        reads is the object that holds a family member, not a wrapper being looked through."""
        params = {p.name: p.annotation for p in fn.params}
        out = set()
        for m in members:
            receivers = [p.receiver for p in fn.probes if p.member == m]
            if receivers and all(r is not None and is_name(r) and params.get(r[1]) is not None
                                 and r[1] not in fn.locals
                                 and not self.resolver.annotation(params[r[1]], module) for r in receivers):
                out.add(m)
        return out

    def via_unwrapper(self, site_fn: FunctionInfo, scope, ref: tuple | None, wrapper: str) -> bool:
        """Whether a receiver comes out of code that unwraps `wrapper`'s family."""
        structure = self.family_structure(wrapper)
        if self.unwrapping_functions.get(function_ref(scope.module, scope.cls, site_fn), frozenset()) & structure:
            return True
        return self._unwrapped(site_fn, scope, ref, structure, 0, {})

    def _unwrapped(self, site_fn: FunctionInfo, scope, ref: tuple | None, structure: frozenset[str], depth: int,
                   memo: dict[tuple[str, int], bool]) -> bool:
        # A local's answer at a given depth is worked out once: a long function whose locals read
        # each other would otherwise be walked once per path through them (a million calls for
        # 7,564 questions on one real tree).
        if ref is None or depth > 6:
            return False
        if is_call(ref):
            res = self.resolver.resolve(ref[1], scope)
            for t in res.types:
                if self.unwrapping_functions.get(t, frozenset()) & structure:
                    return True
        if (base := base_of(ref)) is not None:
            return self._unwrapped(site_fn, scope, base, structure, depth + 1, memo)
        if is_name(ref) and ref[1] in site_fn.locals:
            key = (ref[1], depth)
            hit = memo.get(key)
            if hit is None:
                hit = memo[key] = any(self._unwrapped(site_fn, scope, v, structure, depth + 1, memo)
                                      for v in site_fn.locals[ref[1]])
            return hit
        return False

    def wrapper_ancestors(self, qual: str) -> list[str]:
        return [c for c in self.index.mro(qual)[1:] if c in self.wrappers]

    def outermost(self, found: dict[tuple[str, str], object]) -> list[tuple[str, str]]:
        """The (wrapper, member) keys of `found` whose wrapper has no wrapper ancestor in `found`
        for the same member: a gap a wrapper inherits from another is reported once, on the
        wrapper it comes from."""
        return [(wq, member) for wq, member in found
                if not any((a, member) in found for a in self.wrapper_ancestors(wq))]

    def reads_own_delegate(self, site_cls: str | None, fn: FunctionInfo, ref: tuple | None) -> bool:
        """A wrapper's method reaching one of its own delegates (`self.full_attn_backend`, a loop
        over `self.backends`), as opposed to any other receiver."""
        if site_cls is None or site_cls not in self.wrappers or not fn.params:
            return False
        return self._own_delegate_in(site_cls, fn, ref, 0)

    def classes_read_from_own_attrs(self, site_cls: str | None, fn: FunctionInfo, ref: tuple | None) -> set[str] | None:
        """The classes a receiver in a method of `site_cls` can be when every value it can take
        reads an attribute of `self` (`pool = self.a if x else self.b`, a loop over
        `self.backends`): what a wrapper's delegates hold, or what the class is built with
        (passed_values), each exact one alone. None where some value may be anything else."""
        if site_cls is None or site_cls not in self.index.classes or not fn.params or ref is None:
            return None
        wrapper = self.wrappers.get(site_cls)
        by_attr = {d.attr: d for d in wrapper.delegates} if wrapper is not None else {}
        attrs: set[str] = set()
        if not _only_self_attrs(ref, fn, fn.params[0].name, attrs, 0) or not attrs:
            return None
        out: set[str] = set()
        for attr in attrs:
            d = by_attr.get(attr)
            if d is not None:
                out |= set(self.implementations(d.types, leaves_only=False, exact=d.exact))
                continue
            # another attribute of its own: what it is built with
            got = self.passed_values.attribute_values(site_cls, attr)
            if got is None or not all(isinstance(t, str) for t in got.values):
                return None
            out |= set(self.implementations(got.values.keys(), leaves_only=False,
                                            exact=frozenset(t for t, e in got.values.items() if e)))
        return out

    def _own_delegate_in(self, site_cls: str, fn: FunctionInfo, ref: tuple | None, depth: int) -> bool:
        """`ref` reads one of the wrapper's delegates: directly (through locals, loops, indexing),
        or as what a method of its own returns when every return reads one
        (`self._select_backend(mode).hook(...)`)."""
        me = fn.params[0].name if fn.params else None
        if me is None or ref is None:
            return False
        if mentions_self_attr(ref, fn, me, self.wrappers[site_cls].attrs) is not None:
            return True
        while is_name(ref) and len(fn.locals.get(ref[1], ())) == 1:
            ref = fn.locals[ref[1]][0]  # `backend = self._select_backend(mode)`
        if depth >= 2 or not is_call(ref) or not ref[1] or not is_attr(ref[1]) or not is_self(ref[1][1], me):
            return False
        found = self.index.method(site_cls, ref[1][2])
        if found is None or not found.fn.return_values or found.fn.kind != "method":
            return False
        helper = found.fn
        return all(self._own_delegate_in(site_cls, helper, v, depth + 1) for v in helper.return_values)

    def is_wrapper_internal(self, site_cls: str | None, fn: FunctionInfo, ref: tuple | None) -> bool:
        """A wrapper's own code reading its delegates (not itself): never a probe of a wrapper,
        except of the wrappers `wrappers_given` finds handed to a parameter it reads (the caller,
        Context.reaching, asks that per wrapper)."""
        if site_cls is None or site_cls not in self.wrappers or not fn.params:
            return False
        return root_name(ref) != fn.params[0].name or self.reads_own_delegate(site_cls, fn, ref)

    @cached_property
    def wrappers(self) -> dict[str, Wrapper]:
        out: dict[str, Wrapper] = {}
        for qual in self.family_members:
            w = self._wrapper(qual)
            if w is not None:
                out[qual] = w
        passed = self.passed_values
        for w in out.values():
            for d in w.delegates:
                self._narrow_by_construction(w.qual, d, out.keys())
                self._narrow_by_passed_values(passed, w.qual, d)
        return out

    def _narrow_by_passed_values(self, passed: PassedValues, qual: str, delegate: Delegate) -> None:
        """Where every assignment of the delegate can be followed to the classes its builders
        call (through the constructor's parameters and their callers: passed_values.py), it holds
        those, each exactly where it is built by calling the class itself."""
        if delegate.sequence:
            return
        got = passed.attribute_values(qual, delegate.attr)
        if got is None:
            return
        values, steps = got.values, got.steps
        held = {t: exact for t, exact in values.items() if isinstance(t, str) and self.same_family(t, qual)}
        if not held or any(not isinstance(t, str) for t in values):
            return  # nothing of the family, or a class object rather than an instance
        types = frozenset(held)
        exact = frozenset(t for t, e in held.items() if e)
        if types == delegate.types and exact == delegate.exact:
            return
        entry = self.index.classes[qual]
        shown = ", ".join(sorted(describe_type(t) for t in types))
        how = "exactly " if exact == types else ""
        delegate.types = types
        delegate.exact = exact
        delegate.evidence = superseded(delegate.evidence) + shortened(steps, 3) + (Evidence(
            entry.file.display, entry.info.line,
            f"`self.{delegate.attr}` holds {how}{shown} (every assignment of it followed to what its "
            f"builders pass)"),)

    def _narrow_by_construction(self, qual: str, delegate: Delegate, wrappers) -> None:
        """Where every construction of the wrapper in the tree passes known classes for the
        parameter a delegate is stored from, the delegate holds those, not every subclass of its
        annotation (`DotsHybrid(create_dsa_backend(...), ...)` holds a DSA backend). A subclass
        constructing its base with `super().__init__(experts=CutlassExperts(...))` counts too.

        Where some construction cannot be read, the others still show what they pass: another
        wrapper (`wrappers`) given to the delegate by one of them is held besides the
        annotation's classes, since implementations() keeps a wrapper only where it is named."""
        sources = self.delegate_sources(qual, delegate.attr)
        if not sources:
            return
        short = qual.rsplit(".", 1)[-1]
        types: set[str] = set()
        evidence: list[tuple[set[str], Evidence]] = []  # what each construction passes, and where
        complete = True
        for scope, (_, args, kwargs, star), params, used, label in sources:
            if star:
                complete = False
                continue
            keywords = dict(kwargs)
            for name in used:
                idx = params.index(name)
                arg = keywords.get(name) or (args[idx] if idx < len(args) else None)
                if arg is None:
                    complete = False
                    continue
                # A parameter of the calling function is what that function's callers give it.
                for w, e in self._wrappers_given_to(scope, arg, wrappers).items():
                    if w != qual and self.same_family(w, qual):
                        types.add(w)
                        evidence.append(({w}, e))
                res = self.resolver.resolve(arg, scope)
                inst = {t for t in res.instances() if self.same_family(t, qual) and t != qual}
                if not inst:
                    complete = False
                    continue
                types |= inst
                mod = self.index.modules[scope.module]
                # Where the argument is known only by its declared type (a parameter's
                # annotation), the construction passes what that declaration allows: a declared link.
                evidence.append((inst, Evidence(mod.file.display, scope.fn.line,
                                                f"`{label}` in `{scope.fn.name}` passes "
                                                f"{', '.join(sorted(describe_type(t) for t in inst))} as `{name}`",
                                                declared=any(e.declared for e in res.steps))))
        if not complete:
            nested = {t for t in types if t in wrappers} - delegate.types
            if nested:
                delegate.types = delegate.types | nested
                delegate.evidence = delegate.evidence + tuple(e for inst, e in evidence if inst & nested)[:3]
            return
        if types and types != set(delegate.types):
            delegate.types = frozenset(types)
            delegate.evidence = superseded(delegate.evidence) + shortened([e for _, e in evidence], 3) + (Evidence(
                self.index.classes[qual].file.display, self.index.classes[qual].info.line,
                f"every construction of `{short}` in the tree is seen: `self.{delegate.attr}` holds "
                f"{', '.join(sorted(describe_type(t) for t in types))}"),)

    # --- wrappers handed on through a function's parameters -----------------------------------
    def wrappers_given(self, site_cls: str | None, fn: FunctionInfo, ref: tuple | None) -> dict[str, Evidence]:
        """The wrappers a receiver can be when it is a parameter of a wrapper's method, from the
        calls of that method the tree shows (for `__init__`, the wrapper's constructions): a
        wrapper built as `Outer(Split(...))` whose `__init__` probes its parameter
        (`getattr(inner, "max_len", None)`) probes the split wrapper. Empty for anything else."""
        if site_cls is None or site_cls not in self.wrappers or not ref or not is_name(ref) or not fn.params \
                or ref[1] == fn.params[0].name:
            return {}
        key = (site_cls, fn.name, fn.line, ref)
        hit = self._given_memo.get(key)
        if hit is None:
            module = self.index.classes[site_cls].module
            hit = self._given_memo[key] = self._wrappers_given_to(Scope(module, site_cls, fn), ref,
                                                                   self.wrappers.keys())
        return hit

    def _wrappers_given_to(self, scope: Scope, arg: tuple, wrappers, depth: int = 0) -> dict[str, Evidence]:
        """Where `arg` is a parameter of the function `scope` is in, the wrappers the calls of that
        function pass for it: what the argument there resolves to, followed again through a
        parameter of the calling function (two steps at most). Each with where it is passed. A
        parameter the function also rebinds still holds what it was given on the other paths."""
        fn = scope.fn
        if depth > 2 or fn is None or not arg or not is_name(arg):
            return {}
        name = arg[1]
        params = list(fn.params[1:] if scope.cls and fn.kind != "staticmethod" else fn.params)
        param = next((p for p in params if p.name == name), None)
        if param is None or param.kind in (VAR_POSITIONAL, VAR_KEYWORD):
            return {}
        idx = params.index(param)
        out: dict[str, Evidence] = {}
        for cscope, (_, args, kwargs, _star), label in self.calls.calls_of(scope):
            given = dict(kwargs).get(name)
            if given is None and param.kind != KEYWORD_ONLY and idx < len(args):
                given = args[idx]
            if given is None:
                continue
            found = {t for t in self.resolver.resolve(given, cscope).instances() if t in wrappers}
            if found:
                mod = self.index.modules[cscope.module]
                e = Evidence(mod.file.display, cscope.fn.line,
                             f"`{label}` in `{cscope.fn.name}` passes "
                             f"{', '.join(sorted(describe_type(t) for t in found))} as `{name}`")
                for t in sorted(found):
                    out.setdefault(t, e)
            for t, e in self._wrappers_given_to(cscope, given, wrappers, depth + 1).items():
                out.setdefault(t, e)
        return out

    def _stored_params(self, init: FunctionInfo, attr: str) -> list[str] | None:
        """The `__init__` parameters that `self.<attr>` is assigned from (directly or in a list)."""
        params = [p.name for p in init.params[1:]]
        used: list[str] = []
        for value, _, _ in _stores(init, attr):
            items = value[1] if is_seq(value) else (value,)
            for item in items:
                if not item or not is_name(item) or item[1] not in params:
                    return None
                used.append(item[1])
        return used or None

    def delegate_sources(self, qual: str, attr: str) -> list | None:
        """Every call that can run the `__init__` storing `attr` for an instance of `qual`, with
        that `__init__`'s parameter names: (scope, construction, params, used, label)."""
        found = self.index.method(qual, "__init__")
        if found is None:
            return None
        owner, init = found
        used = self._stored_params(init, attr)
        if used:
            params = [p.name for p in init.params[1:]]
            return [(scope, c, params, used, label) for scope, c, label in self.calls.init_calls(qual, owner == qual)]
        if _stores(init, attr):
            return None  # stored from something other than a parameter
        # Stored by the base's __init__, which this class's __init__ calls with super().
        supers = [c for c in init.constructions if is_super_init(c[0])]
        parents = self.index.bases(owner)[0]
        if len(supers) != 1 or not parents:
            return None
        base_init = self.index.classes[parents[0]].info.methods.get("__init__")
        base_used = self._stored_params(base_init, attr) if base_init else None
        if not base_used:
            return None
        entry = self.index.classes[owner]
        return [(Scope(entry.module, owner, init), supers[0], [p.name for p in base_init.params[1:]], base_used,
                 "super().__init__(...)")]

    def _wrapper(self, qual: str) -> Wrapper | None:
        entry = self.index.classes[qual]
        assigned, used = self.index.bottom_up(qual, self._attrs_memo, self._attrs_with_inherited)
        # Only attributes something is called or probed on can be forwarded to; typing just those
        # keeps this pass cheap on classes with hundreds of attributes.
        attrs = assigned & used
        delegates: list[Delegate] = []
        for attr in sorted(attrs):
            res = self._stored(qual, attr) or self.resolver.attribute_of(qual, attr)
            members = {t for t in res.types if isinstance(t, str) and self.same_family(t, qual)}
            seq = {q for t in res.types if (q := seq_of(t)) is not None and self.same_family(q, qual)}
            if members or seq:
                shown = ", ".join(sorted(describe_type(t) for t in res.types))
                note = f"`self.{attr}` holds {shown}"
                delegates.append(Delegate(attr, frozenset(members | seq), bool(seq) and not members,
                                          res.steps + (Evidence(entry.file.display, entry.info.line, note),)))
        if not delegates:
            return None
        names = frozenset(d.attr for d in delegates)
        forwards: list[Evidence] = []
        forwarded: set[str] = set()
        for c in self.index.mro(qual):
            evidence, members = self._forwarding_sites(c, names)
            forwards.extend(evidence)
            forwarded |= members.keys()
        if not forwards:
            return None
        return Wrapper(qual, delegates, forwards, forwarded)

    def _stored(self, qual: str, attr: str) -> Resolution | None:
        """What the stores of a declared attribute hold: `self.x: Base` (or `x: Optional[Base] =
        None` in the class body) then `self.x = A(...)` / `self.x = B(...)` holds A or B. A
        declaration bounds the values (a store typed wider than it is narrowed to it); counted as
        one more value, it would add `Base` and so every subclass of it. Read from the class the
        resolver reads (the first of the MRO that stores it) and the declarations up to it. None
        where none declares it, or where some store is nothing the resolver can type: there the
        declaration says what the store holds, as a parameter's annotation does (the resolver's
        own answer)."""
        bound: frozenset | None = None  # the nearest declaration's classes
        for c in self.index.mro(qual):
            entry = self.index.classes[c]
            ca = entry.info.attrs.get(attr)
            if ca is not None and ca.value is not None:
                return None  # a class-level value: the resolver's business
            declared = [ca.annotation] if ca is not None and ca.annotation is not None else []
            stores = []
            for method, e in self.index.assignments(c).get(attr, ()):
                if (attr, e[2]) in method.declarations or (attr, e[2]) in method.falsy_stores:
                    declared += [e[1]] if e[1] is not None else []  # a false literal is no class either
                else:
                    stores.append((method, e))
            if bound is None and declared:
                bound = frozenset().union(*(self.resolver.annotation(a, entry.module) for a in declared))
            if stores:
                break
        else:
            return None
        if not bound:
            return None
        out: set = set()
        steps: list[Evidence] = []
        for method, (value, ann, line) in stores:
            res = self.resolver.resolve(value, Scope(entry.module, c, method))
            types = res.types or self.resolver.annotation(ann, entry.module)
            if not types:
                return None
            # What the assignment's annotation, or the attribute's declaration, says in place of
            # what the value is: a declared link.
            declared = not res.types
            for t in types:
                narrower = {d for d in bound if isinstance(t, str) and isinstance(d, str) and d != t
                            and t in self.index.mro(d)}
                out |= narrower or {t}
                declared = declared or bool(narrower)
            steps.extend(res.steps)
            shown = ", ".join(sorted(describe_type(t) for t in types))
            steps.append(Evidence(entry.file.display, line, f"`{entry.info.name}.{method.name}` assigns "
                                                            f"`self.{attr}` ({shown})", declared=declared))
        return Resolution(frozenset(out), shortened(steps, 8))

    def forwarded_to(self, qual: str, attr: str) -> dict[str, Evidence]:
        """The members `qual`'s methods (own and inherited) call or probe on `self.<attr>`, each
        with where it first does."""
        out: dict[str, Evidence] = {}
        for c in self.index.mro(qual):
            for member, evidence in self._forwarding_sites(c, frozenset((attr,)))[1].items():
                out.setdefault(member, evidence)
        return out

    def _attrs_with_inherited(self, qual: str) -> tuple[frozenset[str], frozenset[str]]:
        """(`self` attributes assigned, read as receivers) in the class and its ancestors: a
        subclass of a wrapper holds the same delegates. Built on the parents' entries, so that a
        long chain of classes is not walked once per class."""
        assigned = set(self.index.assignments(qual))
        used = set(self.facts[self.index.classes[qual].module].receiver_attrs.get(qual, ()))
        for parent in self.index.bases(qual)[0]:
            inherited = self._attrs_memo.get(parent)  # missing only in a cyclic hierarchy
            if inherited is not None:
                assigned |= inherited[0]
                used |= inherited[1]
        return frozenset(assigned), frozenset(used)

    def _forwarding_sites(self, qual: str,
                          delegate_attrs: frozenset[str]) -> tuple[list[Evidence], dict[str, Evidence]]:
        """Calls and probes in class `qual`'s own methods through those attributes, and the members
        they reach (each with its first site). Shared by every subclass that holds the same delegates."""
        key = (qual, delegate_attrs)
        hit = self._forwarding_memo.get(key)
        if hit is not None:
            return hit
        entry = self.index.classes[qual]
        out: list[Evidence] = []
        forwarded: dict[str, Evidence] = {}
        for fn in entry.info.methods.values():
            self_name = fn.params[0].name if fn.params else None
            if self_name is None:
                continue
            for call in fn.calls:
                target = member_target(fn, call.func)
                attr = mentions_self_attr(target[0], fn, self_name, delegate_attrs) if target else None
                if attr:
                    member = target[1]
                    out.append(Evidence(entry.file.display, call.line,
                                        f"`{entry.info.name}.{fn.name}` forwards `{member}` to `self.{attr}`"))
                    forwarded.setdefault(member, out[-1])
            for probe in fn.probes:
                attr = mentions_self_attr(probe.receiver, fn, self_name, delegate_attrs)
                if attr:
                    out.append(Evidence(entry.file.display, probe.line,
                                        f"`{entry.info.name}.{fn.name}` probes `{probe.member}` on `self.{attr}`"))
                    forwarded.setdefault(probe.member, out[-1])
            for value in fn.return_values:
                # `return self.inner.supports_x` in a property (or method) `supports_x`: the
                # delegate's own answer handed on under its own name.
                if value and is_attr(value) and value[2] == fn.name:
                    attr = mentions_self_attr(value[1], fn, self_name, delegate_attrs)
                    if attr:
                        out.append(Evidence(entry.file.display, fn.line,
                                            f"`{entry.info.name}.{fn.name}` hands on `self.{attr}.{fn.name}`"))
                        forwarded.setdefault(fn.name, out[-1])
        self._forwarding_memo[key] = (out, forwarded)
        return out, forwarded


def _stores(fn: FunctionInfo, attr: str) -> list[tuple]:
    """`fn`'s assignments of `self.<attr>`, without its bare declarations (`self.x: Base`), which
    store nothing."""
    return [e for e in fn.self_attrs.get(attr, ()) if (attr, e[2]) not in fn.declarations]


def _only_self_attrs(ref: tuple | None, fn: FunctionInfo, self_name: str, out: set[str], depth: int) -> bool:
    """Whether every value `ref` can take is `self.<attr>` (an item of it, or through a local
    every binding of which is such); collects those attrs in `out`."""
    if ref is None or depth > 6:
        return False
    if is_attr(ref) and is_self(ref[1], self_name):
        out.add(ref[2])
        return True
    if is_item(ref):
        return _only_self_attrs(ref[1], fn, self_name, out, depth + 1)
    if is_union(ref):
        return all(_only_self_attrs(r, fn, self_name, out, depth + 1) for r in ref[1])
    if is_name(ref) and ref[1] != self_name and fn.locals.get(ref[1]):
        return all(_only_self_attrs(v, fn, self_name, out, depth + 1) for v in fn.locals[ref[1]])
    return False
