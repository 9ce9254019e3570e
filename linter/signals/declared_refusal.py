"""declared-refusal: a wrapper whose own override of a hook only raises NotImplementedError chose to.

AL003 keeps reporting a wrapper that overrides a hook with a placeholder of its own (a body that
only raises NotImplementedError) while an implementation its delegates can hold implements it: on
the wrapper the call still raises, so replacing an inherited placeholder with another placeholder
fixes nothing, and a release that did so must not look fixed.

But such an override is written in the wrapper's own class: its author looked at this hook while
writing the wrapper and declared it unsupported there ("should not be called", "use the other
entry point", "not yet supported until ..."). The drift the rules look for is the hook the author
did not see: an inherited default, a member never written. A declared refusal says which
configurations the code does not mean to run, not that one breaks unnoticed; it stays visible as
latent drift.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..findings import Reason
from ..model.confidence import Pairing, Signal

if TYPE_CHECKING:
    from ..model.context import Context


class DeclaredRefusal(Signal):
    name = "declared-refusal"
    doc = ("Rules out a pairing where the wrapper itself overrides the hook with a body that only raises "
           "NotImplementedError: the wrapper's author declared the hook unsupported there, so the "
           "configurations it refuses are not drift the code missed (still listed as latent).")

    def rule_out(self, ctx: Context, p: Pairing) -> Reason | None:
        index = ctx.index
        if p.wrapper is None or p.wrapper not in index.classes:
            return None
        found = index.method(p.wrapper, p.member)
        if found is None or found.owner != p.wrapper or not found.fn.unimplemented:
            return None
        entry = index.classes[p.wrapper]
        return Reason(self.name, "lower", entry.file.display, found.fn.line,
                      f"`{entry.info.name}.{p.member}` is the wrapper's own `raise NotImplementedError`: its "
                      f"author declared the hook unsupported there, not a default the wrapper inherits unseen")
