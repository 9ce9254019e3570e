"""Pairings the code itself cannot run: the delegate's own consumer would crash on the wrapper.

Code that probes an optional hook on the installed object and, on the same path, calls a member
unguarded that only some implementations have (`b = get_backend(); if hasattr(b, "hook"): ...;
b.impl_only()`) was written for those implementations: with a wrapper installed that lacks the
member (neither defines nor inherits it, no `__getattr__`), the hard call raises AttributeError
whatever the probe says. The wrapper holding that implementation is not a configuration the code
supports, so the probe's silent skip is not what breaks it.

"The same object" is read from the summary: the same receiver expression (a local, `self.x`, a
narrowing `cast`/annotated local), or a call of the same accessor (`get_backend()` twice). "On the
same path": every flag test that decides the hard call also decides the probe (linter/perfile/guards.py),
and the call is not itself guarded by a probe of its member. The reason is said once per
(wrapper, implementation): every finding it hides carries the same text, so latent findings group.

The same holds tree-wide, for the implementation's own consumers: code that calls, unguarded, a
member only one lineage of the family has (every implementation having it shares a base the
receiver's type is not: the class introducing it, or a mixin) on the installed object was written
for that lineage being installed itself. The installed object is what a global accessor returns
(`get_backend().impl_only(...)`: a function without parameters returning an attribute or a
global) or what a slot holds (`ctx.backend.impl_only(...)`: an attribute that a class outside the
family types as a base with subclasses). A wrapper lacking the member, holding an implementation of that
lineage, would crash there: the pairing is one the code cannot run, whatever site probes it.
A member of the implementation's own lineage that another lineage has too (two backends of one
model for two kinds of hardware) says the same where the classes having it that the calling
module names (defines or imports) are of one lineage, the implementation's: that code was written
with it in view, so the pairing does not turn supported because an unrelated class gained a
member of that name. A module naming no holder, or holders of two lineages (a registry of every
backend), keeps the pairing: it only says one of the holders is installed, not which.
A call made only where a test of an object's kind holds (inside `if isinstance(c, SupportsX):`, or
after `if not isinstance(c, SupportsX): return ...`) is not unguarded: it runs on the kinds the
test names, and every other installed object takes the other branch.
Code that asserts the installed object is an implementation of that lineage wherever it runs
(`b = get_backend()`, `assert isinstance(b, Impl)` in the function's body or its `if
TYPE_CHECKING:` block, on an object no other `isinstance` there tests: what the authors declare it
to be) says so as plainly, for every wrapper that is not such an instance. An assertion naming a
wrapper class does not: a wrapper is a composition point many configurations share, and one
model's code asserting it says which wrapper that model installs, not that no other wrapper holds
that one's subclasses.
A slot says so only while nothing can put the wrapper's delegate there: a module outside the
wrapper that takes its delegates out of the slot (`parts = batch.backend.children`) and fills
slots of that name (`Batch(backend=part)`, `self.backend = part`) may hand the consumer the
delegate itself, which is then the installed object, not the wrapper.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from ..findings import Reason, short
from ..model.confidence import Pairing, Signal
from ..model.facts import Site, scopes_of
from ..model.holding_tests import kind_tests_at
from ..model.resolve import Scope
from ..perfile.guards import deciding
from ..refs import class_values, is_attr, is_call, is_name

if TYPE_CHECKING:
    from ..model.context import Context


class UnsupportedPairing(Signal):
    name = "unsupported-pairing"
    doc = ("Where a probe's own function calls, on the same object and the same path, a member only "
           "some implementations have, a wrapper lacking it would crash there first: the wrapper "
           "holding such an implementation is a pairing the code itself cannot run. Likewise where "
           "the implementation's own consumers call such a member on the installed object, or "
           "assert that object is an instance of the implementation's lineage.")

    def rule_out(self, ctx: Context, p: Pairing) -> Reason | None:
        if p.wrapper is None or p.wrapper not in ctx.index.classes or p.wrapper in ctx.index.mro(p.impl):
            return None  # (no wrapper: the receiver's own class is the implementation)
        memo = ctx.state(UnsupportedPairing, dict)
        pair = (p.wrapper, p.impl)
        use = _hard_use(ctx, p) if p.kind == "probe" else None
        if use is not None:
            if pair not in memo:
                path, line, what = use
                memo[pair] = Reason(self.name, "lower", path, line,
                                    f"`{short(p.wrapper)}` holding `{short(p.impl)}` cannot run: the code "
                                    f"that probes it reads {what}, unguarded on the same object ({path}:{line})")
            return memo[pair]
        # Not said at this site; the implementation's own consumers elsewhere decide for the pair.
        consumer = _Consumers.of(ctx).hard_call(p.wrapper, p.impl)
        if consumer is None:
            return None
        if pair not in memo:
            impl = short(p.impl)
            memo[pair] = Reason(self.name, "lower", consumer.path, consumer.line,
                                f"`{short(p.wrapper)}` holding `{impl}` cannot run: `{impl}`'s consumers "
                                f"{consumer.what} ({consumer.path}:{consumer.line}), {consumer.why}")
        return memo[pair]


class _Consumer(NamedTuple):
    """Code of the implementation's own that a wrapper holding it cannot serve, and why."""

    path: str
    line: int
    what: str  # what that code does, as the reason says it
    why: str  # why the wrapper cannot be what it meets


def _object_keys(fn, ref: tuple | None) -> set:
    """What names the object a ref reads: the ref itself, and the accessor it was fetched from
    (`get_backend()` directly or through a local bound to it): one accessor, one installed object."""
    if ref is None:
        return set()
    values = fn.locals.get(ref[1], ()) if is_name(ref) else (ref,)
    keys = {("accessor", v[1]) for v in values if v and is_call(v) and v[1] is not None}
    if not is_call(ref):
        keys.add(ref)
    return keys


def _hard_use(ctx: Context, p: Pairing) -> tuple[str, int, str] | None:
    """(path, line, what) of an unguarded read of the probed object that the wrapper cannot serve
    but `impl` can."""
    index = ctx.index
    fn = p.site.fn
    if p.receiver is None or not fn.reads or p.impl not in index.classes or p.wrapper not in index.classes \
            or index.has_getattr_hook(p.wrapper) or index.opaque_bases(p.wrapper):
        return None
    for read in _unguarded_reads(ctx, fn, p.receiver, p.line):
        what = _wrapper_fails(index, p.wrapper, p.impl, read.attr, read.chained)
        if what:
            return p.site.path, read.line, what
    return None


def _unguarded_reads(ctx: Context, fn, receiver: tuple, line: int) -> list:
    """The reads of the probed object in `fn` that run on the probe's own path and read a member
    not probed there (the same for every pairing at that probe: kept)."""
    memo = ctx.state(_unguarded_reads, dict)
    key = (id(fn), receiver, line)
    hit = memo.get(key)
    if hit is None:
        obj = _object_keys(fn, receiver)
        hit = []
        if obj:
            probed = {q.member for q in fn.probes if q.receiver is None or _object_keys(fn, q.receiver) & obj}
            at_probe = deciding(fn.guards, line)
            # (a read decided by a test the probe is not is on another path)
            hit = [read for read in fn.reads if read.attr not in probed and _object_keys(fn, read.receiver) & obj
                   and deciding(fn.guards, read.line) <= at_probe]
        memo[key] = hit
    return hit


def _wrapper_fails(index, wrapper: str, impl: str, attr: str, chained: bool) -> str | None:
    """Why reading `attr` (and, when chained, something off it) works on `impl` and fails on the
    wrapper; None when it does not."""
    on_impl = index.lookup(impl, attr)
    if on_impl is None:
        return None
    found = index.lookup(wrapper, attr)
    if found is None:
        return f"`.{attr}`, which `{short(wrapper)}` lacks"
    if not chained or any(attr in index.assignments(c) for c in index.mro(wrapper) if c in index.classes):
        return None
    owner = index.classes.get(found.owner)
    ca = owner.info.attrs.get(attr) if owner else None
    if ca is None or ca.value is not None or attr in owner.info.methods:
        return None
    # The wrapper has only the class-level constant default (`meta = None`); `impl` sets its own.
    if any(attr in index.assignments(c) for c in index.mro(impl) if c in index.classes):
        return (f"`.{attr}.…`, where `{short(wrapper)}` has only `{owner.info.name}`'s class-level "
                f"default for `{attr}` and never sets it")
    return None


def _kind_tested(ctx: Context, site, line: int) -> bool:
    """The line runs only where an `isinstance(...)` test holds (inside `if isinstance(c, X):`,
    or after `if not isinstance(c, SupportsX): return ...`): the call there is made on the kinds
    the test names, not on whatever the accessor can return."""
    mod = ctx.index.modules.get(site.module)
    return mod is not None and bool(kind_tests_at(ctx.tree.text, site.scope, mod.file.path, line))


class _Consumers:
    """Per run: the unguarded member calls on an accessor's result, found lazily by member."""

    def __init__(self, ctx: Context):
        self.ctx = ctx
        self.index = ctx.index
        self._optional = {(id(site.fn), call.line, call.col) for site, call, _ in ctx.optional_candidates}
        self._accessors: dict[str, tuple | None] = {}  # qualified function -> its return types
        self._calls: dict[str, list] = {}  # member -> [(path, line, accessor name, types, slot, module)]
        self._lineage: dict[tuple[str, str], str | None] = {}
        self._pairs: dict[tuple[str, str], _Consumer | None] = {}
        self._knows: dict[tuple, bool] = {}
        self._named: dict[str, set[str]] = {}  # module -> classes it defines or imports
        self._slot_readers: dict[tuple[str, str], set[str]] | None = None  # (slot, attr) -> modules
        self._declared: list[tuple] | None = None  # declarations(), made on first use

    @staticmethod
    def of(ctx: Context) -> _Consumers:
        return ctx.state(_Consumers, lambda: _Consumers(ctx))

    def hard_call(self, wrapper: str, impl: str) -> _Consumer | None:
        """An unguarded call, on an accessor's result that can be `wrapper`, of a member `wrapper`
        lacks and that only `impl`'s lineage has, or that a class of `impl`'s own lineage has and
        the calling module names; else an assertion that the accessor's result is an instance of
        a class of `impl`'s lineage that `wrapper` is not (`declared`)."""
        key = (wrapper, impl)
        if key in self._pairs:
            return self._pairs[key]
        index = self.index
        found = None
        if impl in index.classes and not index.has_getattr_hook(wrapper) and not index.opaque_bases(wrapper):
            class_level, instance_level = index.member_table(impl)
            for member in sorted(class_level.keys() | instance_level.keys()):
                if member.startswith("__") or index.lookup(wrapper, member) is not None:
                    continue
                calls = self.calls(member)
                if not calls:
                    continue
                for path, line, name, types, slot, module in calls:
                    if slot is not None and self.delegates_may_fill(wrapper, slot):
                        continue
                    for t in types:
                        mro_w, mro_i = index.mro(wrapper), index.mro(impl)
                        if t not in mro_w or t not in mro_i:
                            continue
                        lineage = self.lineage(t, member)
                        named = None if lineage is not None else self.named_lineage(module, impl, t, member)
                        lineage = lineage or named
                        if lineage is not None and not self.knows(wrapper, impl, lineage):
                            whose = (f"a member `{short(named)}` has, which that code names (the family's "
                                     f"base does not declare it)" if named else "a member only its lineage has")
                            found = _Consumer(path, line, f"call `{name}.{member}(...)` unguarded",
                                              f"{whose} and `{short(wrapper)}` lacks")
                            break
                    if found:
                        break
                if found:
                    break
            found = found or self.declared(wrapper, impl)
        self._pairs[key] = found
        return found

    def declared(self, wrapper: str, impl: str) -> _Consumer | None:
        """`assert isinstance(get_backend(), Impl)` (under `if TYPE_CHECKING:` too): the code
        there declares the installed object an instance of a class of `impl`'s lineage, which
        `wrapper` is not; a wrapper holding `impl` is not what that code was written for."""
        index = self.index
        mro_w, mro_i = index.mro(wrapper), index.mro(impl)
        for path, line, accessor, types, classes, slot in self.declarations():
            if not any(t in mro_w and t in mro_i for t in types) or any(c in mro_w for c in classes):
                continue
            mine = sorted(c for c in classes if c in mro_i and c not in self.ctx.model.wrappers)
            if not mine or any(self.knows(wrapper, impl, c) for c in mine) \
                    or (slot is not None and self.delegates_may_fill(wrapper, slot)):
                continue
            return _Consumer(path, line, f"declare `{accessor}` a `{short(mine[0])}` (`assert isinstance(...)`)",
                             f"which `{short(wrapper)}` is not")
        return None

    def declarations(self) -> list[tuple]:
        """(path, line, accessor name, its static types, the classes asserted, slot) of every
        `assert isinstance(<installed object>, C)` that a function of the tree makes wherever it
        runs (summary.FunctionInfo.asserted), in the order of the modules and their functions."""
        if self._declared is not None:
            return self._declared
        out = []
        for module, mod in self.index.modules.items():
            for cls, fn in scopes_of(module, mod.summary):
                for ref, line, kinds in fn.asserted:
                    site = Site(module, cls, fn, mod.file.display)
                    acc = self._accessor_of(site, ref)
                    if acc is None:
                        continue
                    classes = frozenset(q for k in kinds
                                        for q in class_values(self.ctx.resolver.resolve(k, site.scope).types)
                                        if q in self.index.classes)
                    if classes:
                        out.append((site.path, line, acc[0], acc[1], classes, acc[2]))
        self._declared = out
        return out

    def calls(self, member: str) -> list:
        hit = self._calls.get(member)
        if hit is not None:
            return hit
        out = []
        for site, call, (recv, _, how) in self.ctx.member_calls.get(member, ()):
            if how == "getattr" or (id(site.fn), call.line, call.col) in self._optional \
                    or any(q.member == member for q in site.fn.probes):
                continue  # optional where it is called: probed first (each accessor call is a new ref)
            if _kind_tested(self.ctx, site, call.line):
                continue  # made only where a test of an object's kind holds: for the kinds it names
            acc = self._accessor_of(site, recv)
            if acc is not None:
                types = [t for t in acc[1] if self.index.lookup(t, member) is None]
                if types:
                    out.append((site.path, call.line, acc[0], types, acc[2], site.module))
        out.sort(key=lambda c: (c[0], c[1]))
        self._calls[member] = out
        return out

    def _accessor_of(self, site, ref: tuple | None, depth: int = 0) -> tuple | None:
        """(name, static classes, slot attribute or None) when `ref` is a call of an accessor, or a
        local bound only to one."""
        if ref is None or depth > 2:
            return None
        if is_name(ref) and ref[1] in site.fn.locals:
            found = {self._accessor_of(site, v, depth + 1) for v in site.fn.locals[ref[1]]}
            return found.pop() if len(found) == 1 else None
        if is_attr(ref) and depth == 0 or is_attr(ref) and ref[1] and not is_name(ref[1]):
            return self._slot_of(site, ref)
        if not is_call(ref) or not ref[1] or not is_name(ref[1]):
            return None
        sym = self.index.resolve_name(site.module, ref[1][1])
        if sym is None or sym.kind != "function":
            return None
        if sym.qual not in self._accessors:
            self._accessors[sym.qual] = self._accessor(sym.qual)
        types = self._accessors[sym.qual]
        return (ref[1][1].rsplit(".", 1)[-1] + "()", types, None) if types else None

    def _slot_of(self, site, ref: tuple) -> tuple | None:
        """(name, static classes) when `ref` reads an attribute that a class outside the family
        types as a base with subclasses (`ctx.attn_backend`, `self.model_runner.attn_backend`):
        the slot where the installed object is kept, whichever implementation it is."""
        base = self.ctx.resolver.resolve(ref[1], site.scope)
        owners = [t for t in base.instances() if t in self.index.classes]
        if not owners or self.ctx.model.reads_own_delegate(site.cls, site.fn, ref) or self.ctx.model.via_unwrapper(
                site.fn, site.scope, ref, owners[0]):
            return None
        types: set = set()
        for owner in owners:
            res = self.ctx.resolver.attribute_of(owner, ref[2])
            found = {t for t in res.instances() if self.index.subclasses.get(t)}
            if not found or any(self.ctx.model.same_family(owner, t) for t in found):
                return None
            types |= found
        return (f"{owners[0].rsplit('.', 1)[-1]}.{ref[2]}", tuple(sorted(types)), ref[2])

    def delegates_may_fill(self, wrapper: str, slot: str) -> bool:
        """Whether a module outside the wrapper reads one of its delegate attributes off a slot of
        that name (`batch.slot.children`) and fills such slots (`Batch(slot=part)`, `self.slot =
        part`): there the wrapper's delegate can become what the slot holds."""
        if self._slot_readers is None:
            readers: dict[tuple[str, str], set[str]] = {}
            for name, mod in self.index.modules.items():
                for pair in mod.summary.slot_reads:
                    readers.setdefault(pair, set()).add(name)
            self._slot_readers = readers
        w = self.ctx.model.wrappers.get(wrapper)
        if w is None:
            return False
        own = {self.index.classes[c].module for c in self.index.descendants(wrapper) | {wrapper}
               if c in self.index.classes}
        return any(self._slot_readers.get((slot, a), set()) - own for a in w.attrs)

    def _accessor(self, qual: str) -> tuple | None:
        """A function without parameters whose every return reads an attribute or a global: it
        hands out an object kept elsewhere (the installed one), not one it builds or picks."""
        module, _, name = qual.rpartition(".")
        mod = self.index.modules.get(module)
        fn = mod.summary.functions.get(name) if mod else None
        if fn is None or fn.params or not fn.return_values or not all(
                v and (is_attr(v) or (is_name(v) and v[1] not in fn.locals)) for v in fn.return_values):
            return None
        res = self.ctx.resolver.resolve(("call", ("name", name), fn.line, 0), Scope(module, None, mod.summary.toplevel))
        types = tuple(sorted(t for t in res.instances() if self.index.subclasses.get(t)))
        return types or None

    def knows(self, wrapper: str, impl: str, lineage: str) -> bool:
        """Whether the wrapper's code names a class of the lineage (the modules of its own classes,
        not of the bases it shares with the lineage, import or define one): a wrapper written with
        that lineage in view is meant to hold it, whatever other code of that lineage assumes."""
        shared = set(self.index.mro(impl))
        modules = frozenset(self.index.classes[c].module for c in self.index.mro(wrapper)
                            if c in self.index.classes and c not in shared)
        key = (modules, lineage)
        hit = self._knows.get(key)
        if hit is None:
            hit = self._knows[key] = any(lineage in self.index.mro(c) for c in self._named_classes(modules))
        return hit

    def _named_classes(self, modules: frozenset) -> set[str]:
        out: set[str] = set()
        for module in modules:
            named = self._named.get(module)
            if named is None:
                named = set()
                summary = self.index.modules[module].summary
                named.update(f"{module}.{c}" for c in summary.classes)
                for imp in summary.imports:
                    sym = self.index.resolve_name(module, imp.local)
                    if sym is not None and sym.kind == "class":
                        named.add(sym.qual)
                self._named[module] = named
            out |= named
        return out

    def named_lineage(self, module: str, impl: str, static: str, member: str) -> str | None:
        """The lineage of the classes having `member` that the calling module names (defines or
        imports), where they form one (a base they share below `static`, as `lineage` asks of
        every holder in the tree) and `impl` is of it: code written with that lineage in view,
        calling a member the family's base does not declare, expects it installed itself, whatever
        other lineages elsewhere have a member of that name. None where the module names no holder,
        or holders of two lineages (a registry naming every backend says only that one of them is
        installed)."""
        index = self.index
        named = self._named_classes(frozenset({module}))
        holders = sorted(c for c in named if c != static and c in index.classes and static in index.mro(c)
                         and index.lookup(c, member) is not None)
        mine = [c for c in self._shared_bases(holders, static) if c in index.mro(impl)]
        return min(mine, key=lambda c: (len(index.descendants(c)), c)) if mine else None

    def lineage(self, static: str, member: str) -> str | None:
        """A class below which every implementation of `static` having `member` lies (a base they
        share that `static` is not: the class introducing it, or a mixin they all take), when
        there is one: the member is that sub-family's own. Wrappers carrying it do not count."""
        key = (static, member)
        if key in self._lineage:
            return self._lineage[key]
        index, wrappers = self.index, self.ctx.model.wrappers
        holders = [d for d in index.descendants(static)
                   if d not in wrappers and index.lookup(d, member) is not None]
        shared = self._shared_bases(holders, static)
        found = min(shared, key=lambda c: (len(index.descendants(c)), c)) if shared else None
        self._lineage[key] = found
        return found

    def _shared_bases(self, holders: list[str], static: str) -> set[str]:
        """The bases every one of `holders` takes that `static` (and what is above it) is not."""
        if not holders:
            return set()
        index = self.index
        shared = set(index.mro(holders[0])) - set(index.mro(static))
        for h in holders[1:]:
            shared &= set(index.mro(h))
        return shared
