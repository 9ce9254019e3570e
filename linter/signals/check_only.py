"""check-only: a hook whose implementation only refuses configurations loses no working behaviour.

A validation hook (`def validate_x(self): if <test>: raise ValueError(...)`) does nothing in every
configuration it accepts. When a wrapper hides it or inherits the base's no-op instead, the
configurations the implementation would refuse run unrefused behind the wrapper, but no
configuration that works loses a thing. That is worth knowing (the latent section lists it), not a
finding that some configuration breaks. The summary records, per function, whether its body only
tests and refuses (`if`s whose branches only `raise` or `assert`, with at least one refusal).

Only for the rules whose claim is that the hook is skipped (AL001, AL003); a call that cannot bind
(AL002) raises TypeError whatever the body does, and neither does a wrapper whose own member is a
`raise NotImplementedError` placeholder (AL003 over a placeholder): it raises for every
configuration the check would accept.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..findings import Reason, short
from ..model.confidence import Pairing, Signal

if TYPE_CHECKING:
    from ..model.context import Context


class CheckOnly(Signal):
    name = "check-only"
    doc = ("Rules out a pairing whose implementation of the hook only refuses (its body only tests and "
           "raises or asserts): skipping it behind a wrapper lets through what it would refuse, but no "
           "working configuration loses behaviour.")

    def rule_out(self, ctx: Context, p: Pairing) -> Reason | None:
        if p.impl not in ctx.index.classes:
            return None
        found = ctx.index.method(p.impl, p.member)
        if found is None or not found.fn.checks_only:
            return None
        held = ctx.index.method(p.wrapper, p.member) if p.wrapper in ctx.index.classes else None
        if held is not None and held.fn.unimplemented:
            return None  # the wrapper raises NotImplementedError for every configuration the check accepts
        owner, fn = found
        entry = ctx.index.classes[owner]
        return Reason(self.name, "lower", entry.file.display, fn.line,
                      f"`{entry.info.name}.{p.member}` only refuses configurations (it tests and raises): "
                      f"behind `{short(p.wrapper) if p.wrapper else 'the wrapper'}` what it refuses runs "
                      f"unchecked, but no working configuration loses behaviour")
