"""receiver-gate: a probe or call behind a test the wrapper itself answers False never meets it.

`if backend.supports_chunks(): ... hasattr(backend, "plan_chunks")` asks the object first. Where
the wrapper's own answer is a false constant (a method or property whose body only returns
`False`/`None`/`0`, or a class attribute that is a false literal nobody stores on `self`), the
caller takes the other branch whenever the wrapper is the object, and the hook site is never
reached with it: the pairing cannot run there. (Whether the wrapper should answer True is another
question, one AL003 asks of the capability method itself where the family overrides it.)

The test and the site must read the same object: equal refs, where a call is taken without its
position (`get_backend().supports_x()` then `hasattr(get_backend(), ...)`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..findings import Reason, short
from ..model.confidence import Pairing, Signal
from ..model.resolve import Scope
from ..perfile.guards import dominating, gate_subject, same_object
from ..refs import is_call

if TYPE_CHECKING:
    from ..model.context import Context


class ReceiverGate(Signal):
    name = "receiver-gate"
    doc = ("A probe or call reached only where a test of the very same object holds "
           "(`if b.supports_x():`, `if b.use_x:`) never meets a wrapper whose own answer to that test "
           "is a false constant (a method or property returning False/None/0, a false class attribute "
           "nothing stores on the instance).")

    def rule_out(self, ctx: Context, p: Pairing) -> Reason | None:
        site = p.site
        if p.wrapper is None or p.receiver is None or not site.fn.guards or p.wrapper not in ctx.index.classes:
            return None
        memo = ctx.state(ReceiverGate, dict)
        for test, positive in dominating(site.fn.guards, p.line):
            subject = gate_subject(test) if positive else None
            if subject is None or not same_object(subject[0], p.receiver):
                continue
            key = (p.wrapper, subject[1], is_call(test))
            if key not in memo:
                memo[key] = _false_answer(ctx, p.wrapper, subject[1], called=is_call(test))
            answer = memo[key]
            if answer is not None:
                owner, path, line = answer
                call = "()" if is_call(test) else ""
                return Reason(self.name, "lower", site.path, p.line,
                              f"runs only where the object's `{subject[1]}{call}` holds; on `{short(p.wrapper)}` "
                              f"it is `{short(owner)}.{subject[1]}`, a false constant ({path}:{line})")
        return None


def _false_answer(ctx: Context, wrapper: str, member: str, called: bool) -> tuple[str, str, int] | None:
    """(owner, path, line) where the wrapper's `member` is a false constant: a method (called)
    or property (read) whose body only returns one, or a false class attribute (read) no method
    of the wrapper's classes stores on `self`."""
    index = ctx.index
    if index.has_getattr_hook(wrapper) or index.opaque_bases(wrapper):
        return None
    hit = index.lookup(wrapper, member)
    if hit is None:
        return None
    owner, kind = hit
    entry = index.classes[owner]
    if kind == "attr":
        if called or member not in entry.info.falsy_attrs:
            return None
        for c in index.mro(wrapper):
            if c in index.classes and (index.assignments(c).get(member) or any(
                    member in m.other_stores or "*" in m.other_stores
                    for m in index.classes[c].info.methods.values())):
                return None
        return owner, entry.file.display, entry.info.attrs[member].line
    if kind != "method":
        return None
    fn = entry.info.methods[member]
    if (fn.kind == "property") == called or not fn.noop or fn.return_values:
        return None
    got = ctx.tree.text.constant_return(Scope(entry.module, owner, fn))
    if got is None or got.value:
        return None
    return owner, entry.file.display, fn.line

