"""built-chain: a finding whose whole chain is what the code builds is `high`.

A finding's evidence is the chain that ties its site to the wrapper and the wrapper to the
implementation: who calls what, what each assignment stores, what each function returns. Where a
link of it is only a declared type (a parameter annotated `Base`, an attribute annotated `Base`, a
function's `-> Base`), the chain shows what the code *allows* there, not what it puts there: any
subclass of `Base` fits, and the pairing is one the analysis cannot show the code making. Where no
link is, every step is a construction, an assignment, a call or a return the code makes, and the
pairing is the code's own: the finding is `high` (as long as some pairing of it is live).

It never rules a pairing out: a declared type is not evidence against a pairing, only no evidence
for it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..findings import Evidence, Reason
from ..model.confidence import Pairing, Signal

if TYPE_CHECKING:
    from ..model.context import Context


class BuiltChain(Signal):
    name = "built-chain"
    doc = ("A finding whose evidence chain has no declared type in it (no parameter, attribute or return "
           "annotation standing in for what the code builds) rests on constructions, assignments, calls and "
           "returns the code makes: `high`. One declared link leaves it `medium`.")

    def support_chain(self, ctx: Context, chain: Sequence[Evidence], live: Sequence[Pairing]) -> Reason | None:
        if not live or not chain or any(e.declared for e in chain):
            return None
        first = chain[0]
        return Reason(self.name, "raise", first.path, first.line,
                      f"every link of the chain ({len(chain)}) is what the code builds, assigns, calls or "
                      f"returns: no declared type stands in for it")
