"""wrapper-role: what a wrapper is, and which classes can be the object at a site.

A class wraps a family when it hands the family's own operations to the delegate holding the
implementation: the members the family's root declares without implementing (`@abstractmethod`,
`raise NotImplementedError`) that the paired implementation does (`forward`, `decode`, ...).
A class that keeps a member of its family only as a helper (something it uses while loading, a
fallback for misaligned inputs) hands it none of them, or does more of them itself than it hands
over (an operation returning the helper's answer on one path and its own on another does it
itself): it is an implementation in its own right, and a probe of it answers for it, not for its
helper. Only the pairing's own two classes are read, so a class joining the family elsewhere
never changes the answer.

An abstract class (an `@abstractmethod` nothing in its MRO implements, or a `raise
NotImplementedError` placeholder it declares and a subclass implements) is never the object at a
site: a pairing with an abstract implementation cannot run, and a claim about an abstract wrapper
holds only through a concrete subclass that inherits what the claim is about.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..findings import Evidence, Reason
from ..model.confidence import Pairing, Signal
from ..model.facts import mentions_self_attr
from ..perfile.summary import declared_only, is_abstract, member_target
from ..refs import is_attr, is_call, is_name, is_self, is_sub

if TYPE_CHECKING:
    from ..model.context import Context
    from ..perfile.summary import FunctionInfo

_unimplemented = declared_only
_is_abstract_method = is_abstract


class _Roles:
    """Per-run memo of the structural facts this signal reads, built lazily for the classes asked."""

    def __init__(self, ctx: Context):
        self.index = ctx.index
        self.model = ctx.model
        self._abstract: dict[str, tuple[str, FunctionInfo] | None] = {}
        self._declared: dict[str, frozenset[str]] = {}
        self._reach: dict[tuple[str, str], frozenset[str]] = {}

    # --- abstract classes ----------------------------------------------------------------------
    def abstract(self, qual: str) -> tuple[str, FunctionInfo] | None:
        """(owner, method) of an operation `qual` declares without implementing, if it is abstract:
        an `@abstractmethod` nothing in its MRO implements, or a NotImplementedError placeholder
        `qual` itself declares and a subclass implements. A class that merely inherits such a
        placeholder, or a leaf raising it for a mode it does not support, is concrete."""
        if qual in self._abstract:
            return self._abstract[qual]
        index = self.index
        found = None
        for name, (owner, kind) in sorted(index.member_table(qual)[0].items()):
            if kind != "method":
                continue
            fn = index.classes[owner].info.methods[name]
            if _is_abstract_method(fn) or (fn.unimplemented and owner == qual and any(
                    self._implements(sub, name) for sub in index.descendants(qual))):
                found = (owner, fn)
                break
        self._abstract[qual] = found
        return found

    def _implements(self, qual: str, name: str, root: str | None = None) -> bool:
        hit = self.index.method(qual, name)
        return hit is not None and hit.owner != root and not _unimplemented(hit.fn)

    # --- the family's own operations -----------------------------------------------------------
    def declared(self, root: str) -> frozenset[str]:
        """Members the root declares without implementing (abstract, NotImplementedError)."""
        hit = self._declared.get(root)
        if hit is None:
            hit = self._declared[root] = frozenset(
                name for name, fn in self.index.classes[root].info.methods.items()
                if not name.startswith("__") and fn.kind == "method" and _unimplemented(fn))
        return hit

    def core_of(self, a: str, impl: str) -> tuple[frozenset[str], frozenset[str]]:
        """(the roots a class and an implementation share, the operations of those families that
        the implementation does): what the pairing's own two classes say, so a class joining or
        leaving the family elsewhere changes nothing here. Those `impl` leaves unimplemented (a
        prefill-only kernel's decode) are not its operations."""
        shared = self.model.family_members.get(a, frozenset()) & self.model.family_members.get(impl, frozenset())
        ops: set[str] = set()
        for root in shared:
            ops |= {name for name in self.declared(root) if self._implements(impl, name, root)}
        return shared, frozenset(ops)

    # --- what a wrapper's operations reach ------------------------------------------------------
    def reached(self, wq: str, op: str) -> frozenset[str]:
        """The delegate attributes `wq`'s implementation of `op` reaches: directly, through a
        local, through a method of its own that returns a delegate (`self._select(mode).op(...)`),
        or through one call of a method of its own that does."""
        key = (wq, op)
        hit = self._reach.get(key)
        if hit is None:
            found = self.index.method(wq, op)
            attrs = frozenset(d.attr for d in self.model.wrappers[wq].delegates)
            hit = self._reach[key] = frozenset(self._body_reach(wq, found.fn, attrs, 1)) if found else frozenset()
        return hit

    def _body_reach(self, wq: str, fn: FunctionInfo, attrs: frozenset[str], hops: int) -> set[str]:
        if not fn.params:
            return set()
        me = ("name", fn.params[0].name)
        out: set[str] = set()
        for call in fn.calls:
            target = member_target(fn, call.func)
            if target is None:
                continue
            out |= self._delegates_in(wq, fn, target[0], attrs)
            if hops and target[0] == me:
                helper = self.index.method(wq, target[1])
                if helper is not None:
                    out |= self._body_reach(wq, helper.fn, attrs, hops - 1)
        for probe in fn.probes:
            out |= self._delegates_in(wq, fn, probe.receiver, attrs)
        return out

    def _delegates_in(self, wq: str, fn: FunctionInfo, ref: tuple | None, attrs: frozenset[str],
                      depth: int = 0) -> set[str]:
        """The delegate attributes an expression can be read from."""
        if ref is None or depth > 4:
            return set()
        me = fn.params[0].name
        hit = mentions_self_attr(ref, fn, me, attrs)
        if hit:
            return {hit}
        if is_name(ref):
            return {a for v in fn.locals.get(ref[1], ()) for a in self._delegates_in(wq, fn, v, attrs, depth + 1)}
        if is_call(ref) and ref[1] and is_attr(ref[1]) and is_self(ref[1][1], me):
            helper = self.index.method(wq, ref[1][2])
            if helper is not None and helper.fn.params:
                return {a for v in helper.fn.return_values
                        for a in self._delegates_in(wq, helper.fn, v, attrs, depth + 1)}
        return set()

    def handed(self, wq: str, ops: frozenset[str]) -> set[str]:
        """The operations `wq` hands to some delegate (by name anywhere, or from its own method),
        less those it only falls back on (`mixed`)."""
        by_name: set[str] = set()
        for d in self.model.wrappers[wq].delegates:
            by_name |= self.model.forwarded_to(wq, d.attr).keys()
        return {op for op in ops if (op in by_name or self.reached(wq, op)) and not self.mixed(wq, op)}

    def mixed(self, wq: str, op: str) -> bool:
        """`wq`'s `op` returns what a delegate gives on one path and a value it computed without
        one on another: the delegate is a fallback (`if not aligned: return
        self.fallback.decode(...)` then `return out.view(...)`), the class does the operation."""
        found = self.index.method(wq, op)
        if found is None or found.owner != wq or not found.fn.params:
            return False
        fn = found.fn
        if not self.reached(wq, op):
            return False
        names = _DelegatesAndMethods(self.index, wq, frozenset(d.attr for d in self.model.wrappers[wq].delegates))
        me = fn.params[0].name
        # Both shapes in one method's returns: one hands back what a delegate gives, another what
        # the method computed. (A single return wrapping a delegate's result, `Out(x)`, is not
        # told from own work: refs keep no call arguments, so it is not counted.)
        return any(_reads(r, fn, me, names) for r in fn.return_values) and \
            any(_computed_without(r, fn, me, names) for r in fn.return_values)

    def does_itself(self, wq: str, ops: frozenset[str], roots: frozenset[str]) -> list[tuple[str, str, FunctionInfo]]:
        """(op, owner, method) of the operations `wq` implements with a body of its own (not a
        constant) that reaches none of its delegates, or reaches one only as a fallback."""
        out = []
        handed = self.handed(wq, ops)
        for op in sorted(ops - handed):
            found = self.index.method(wq, op)
            if found is not None and found.owner not in roots and not _unimplemented(found.fn) and not found.fn.noop:
                out.append((op, found.owner, found.fn))
        return out


class _DelegatesAndMethods:
    """`in`: a name read off `self` that is one of the wrapper's delegates or one of its methods."""

    def __init__(self, index, wq: str, attrs: frozenset[str]):
        self.index, self.wq, self.attrs = index, wq, attrs

    def __contains__(self, name: str) -> bool:
        return name in self.attrs or self.index.method(self.wq, name) is not None


def _reads(ref, fn: FunctionInfo, me: str, names, depth: int = 0) -> bool:
    """The expression reads `self.<n>` for some `n` in `names` somewhere in it (through locals)."""
    if not isinstance(ref, tuple) or depth > 8:
        return False
    if len(ref) == 3 and is_attr(ref) and is_self(ref[1], me) and ref[2] in names:
        return True
    if len(ref) == 2 and is_name(ref) and isinstance(ref[1], str):
        return any(_reads(v, fn, me, names, depth + 1) for v in fn.locals.get(ref[1], ()))
    return any(_reads(part, fn, me, names, depth + 1) for part in ref[1:])


def _held(ref, fn: FunctionInfo, me: str, depth: int = 0) -> bool:
    """The expression is an attribute of `self` (`self.pool`, or a local bound to one)."""
    if ref is None or depth > 4:
        return False
    if is_attr(ref) and is_self(ref[1], me):
        return True
    if is_name(ref) and ref[1] != me:
        return any(_held(v, fn, me, depth + 1) for v in fn.locals.get(ref[1], ()))
    return False


def _computed_without(ref, fn: FunctionInfo, me: str, names, depth: int = 0) -> bool:
    """A returned value the method computed itself: a call reading neither a delegate nor a
    method of its own (which may hand on to one) nor made on an object it holds, e.g. of a
    kernel function it holds. Not a parameter handed back."""
    if ref is None or depth > 4 or _reads(ref, fn, me, names):
        return False
    if is_call(ref):
        func = ref[1]
        # `self.pool.get(...)`: a method of an object it holds is that object's work (a delegate
        # the model did not see as one), not the method's own.
        return func is not None and not (is_attr(func) and _held(func[1], fn, me))
    if is_name(ref) and ref[1] in fn.locals and ref[1] != me:
        values = fn.locals[ref[1]]
        return bool(values) and all(_computed_without(v, fn, me, names, depth + 1) for v in values)
    if is_attr(ref) or is_sub(ref):
        return _computed_without(ref[1], fn, me, names, depth + 1)
    return False


class WrapperRole(Signal):
    name = "wrapper-role"
    doc = ("A wrapper is a class that hands its family's own operations (what the root declares "
           "without implementing and the paired implementation does) to the delegate holding the "
           "implementation; a class that hands that delegate none of them, or does more of them "
           "itself than it hands over (falling back on the delegate on one path counts as doing it "
           "itself), keeps it as a helper: it is an implementation, and its probes "
           "answer for it. An abstract class (an unimplemented `@abstractmethod`, or a `raise "
           "NotImplementedError` placeholder it declares and a subclass implements) is never the "
           "object at a site: pairings with an abstract implementation cannot run, and a claim about "
           "an abstract wrapper holds only through a concrete subclass that inherits it.")

    def rule_out(self, ctx: Context, p: Pairing) -> Reason | None:
        roles = ctx.state(_Roles, lambda: _Roles(ctx))
        return self._abstract_impl(roles, p) or self._abstract_wrapper(roles, p) or self._helper(roles, p)

    def _abstract_impl(self, roles: _Roles, p: Pairing) -> Reason | None:
        found = roles.abstract(p.impl)
        if found is None:
            return None
        owner, fn = found
        entry = roles.index.classes[owner]
        impl = roles.index.classes[p.impl].info.name
        return Reason(self.name, "lower", entry.file.display, fn.line,
                      f"`{impl}` is abstract (`{entry.info.name}.{fn.name}` is not implemented): it is "
                      f"never the object at the site")

    def _abstract_wrapper(self, roles: _Roles, p: Pairing) -> Reason | None:
        wq, index = p.wrapper, roles.index
        if wq is None or wq not in index.classes or wq in index.mro(p.impl):
            return None  # (the object is the implementation; the wrapper's class only hosts the site)
        found = roles.abstract(wq)
        if found is None:
            return None
        claim = index.lookup(wq, p.member)
        # A site in the wrapper's own code counts only for subclasses that still run that method.
        runs = (p.site.fn.name, p.site.cls) if p.site.cls in index.mro(wq) else None
        for sub in sorted(index.descendants(wq)):
            if roles.abstract(sub) is None and index.lookup(sub, p.member) == claim and (
                    runs is None or index.owner_of(sub, runs[0]) == runs[1]):
                return None  # a concrete subclass inherits the claim: it stands, for that class
        owner, fn = found
        entry = index.classes[owner]
        w = index.classes[wq].info.name
        return Reason(self.name, "lower", entry.file.display, fn.line,
                      f"`{w}` is abstract (`{entry.info.name}.{fn.name}` is not implemented) and no "
                      f"concrete subclass inherits the claim about `{p.member}`")

    def _helper(self, roles: _Roles, p: Pairing) -> Reason | None:
        wq, model, index = p.wrapper, roles.model, roles.index
        if wq not in model.wrappers or model.reads_own_delegate(p.site.cls, p.site.fn, p.receiver):
            return None  # the wrapper's own code calling its delegate runs whatever the class is
        mro = set(index.mro(p.impl))
        attrs = sorted(d.attr for d in model.wrappers[wq].delegates if d.types & mro)
        roots, core = roles.core_of(wq, p.impl)
        if not attrs or not core:
            return None  # not held by a delegate, or a family declaring no operations: no opinion
        entry = index.classes[wq]
        w = entry.info.name
        held = ", ".join(f"`self.{a}`" for a in attrs)
        forwarded: dict[str, Evidence] = {}
        for attr in attrs:
            for op, e in model.forwarded_to(wq, attr).items():
                if op in core:
                    forwarded.setdefault(op, e)
        for op in sorted(core - forwarded.keys()):
            if set(attrs) & roles.reached(wq, op):
                found = index.method(wq, op)
                forwarded[op] = Evidence(index.classes[found.owner].file.display, found.fn.line,
                                         f"`{w}.{op}` reaches {held}")
        ops = ", ".join(f"`{op}`" for op in sorted(core))
        impl = index.classes[p.impl].info.name
        if not forwarded:
            return Reason(self.name, "lower", entry.file.display, entry.info.line,
                          f"`{w}` forwards none of its family's operations ({ops}) to {held}: it keeps "
                          f"`{impl}` as a helper, it does not wrap it")
        # A class doing more of its family's operations itself than it hands to its delegates is
        # an implementation with helpers (a fallback for misaligned inputs, say), not a wrapper.
        itself = roles.does_itself(wq, core, roots)
        if not itself or len(itself) < len(roles.handed(wq, core)):
            return None
        op, owner, fn = itself[0]
        first = forwarded[min(forwarded)]
        mine = ", ".join(f"`{o}`" for o, _, _ in itself)
        return Reason(self.name, "lower", index.classes[owner].file.display, fn.line,
                      f"`{w}` does {mine} itself without reaching a delegate (`{index.classes[owner].info.name}."
                      f"{op}`) and hands {held} only {', '.join(f'`{o}`' for o in sorted(forwarded))} "
                      f"({first.path}:{first.line}): it is an implementation with a helper, not a "
                      f"wrapper of `{impl}`")
