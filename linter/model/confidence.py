"""How sure a finding is: the pairings it claims, and the signals that rule them in or out.

A finding is a claim that a real configuration breaks. Each rule knows which concrete pairings its
claim rests on: a wrapper (or the class holding the receiver) paired with an implementation its
delegate can hold, seen from one probe or call site. A pairing the code itself shows can never
happen (the delegate is never built from that implementation, the wrapper is built only for
another model, the site runs only on another platform, ...) does not support the claim.

Signals are small classes, one per module under `linter/signals/`, each reading the tree model
only. `assess` asks every signal about every pairing of a finding:

* a pairing that some signal rules out is dead, with that signal's reason;
* a finding whose pairings are all dead is `low` (latent drift: shown with `--show-latent`);
* a finding with a live pairing is `medium`, and `high` when a signal supports a live pairing
  with positive evidence (a visible construction builds that very pairing, say).

Nothing here knows any engine's names: signals read code structure.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from ..findings import HIGH, LOW, MEDIUM, Evidence, Reason

if TYPE_CHECKING:
    from .context import Context
    from .facts import Site

MAX_REASONS = 8  # reasons kept on a finding: enough to judge it, short enough to read
# Pairings assessed in one run before each finding gets only its first CUT_PAIRINGS: sglang's
# 1.8 M lines have 796 in all (264 at most for one finding); a planted family of a thousand
# wrappers around a thousand implementations would have millions.
MAX_PAIRINGS = 100_000
CUT_PAIRINGS = 16


@dataclass(frozen=True)
class Pairing:
    """One concrete way a claim can come true."""

    rule: str  # the rule's code
    wrapper: str | None  # the wrapper (or class holding the receiver) the claim is about
    impl: str  # a concrete class the delegate (or receiver) can hold
    member: str
    site: Site  # where the hook is probed or the call is made
    line: int
    kind: str  # "probe" | "call"
    receiver: tuple | None = None  # the receiver's ref at the site, as the summary recorded it


class Signal:
    """A structural fact that rules a pairing out, or supports it."""

    name: ClassVar[str]  # stable, kebab-case: shown in reasons and docs
    doc: ClassVar[str]  # one paragraph: what the signal reads and why it decides
    # (key, function of (module name, summary)): what the signal derives from one module alone,
    # kept under that key in the module's facts (facts.ModuleFacts.derived). A cold run computes
    # it while the workers still parse, where it costs half what it costs after the parse.
    per_module: ClassVar[tuple[str, Callable] | None] = None

    def rule_out(self, ctx: Context, p: Pairing) -> Reason | None:
        """A reason this pairing can never run, or None."""
        return None

    def support(self, ctx: Context, p: Pairing) -> Reason | None:
        """Positive evidence that this pairing runs, or None."""
        return None

    def support_chain(self, ctx: Context, chain: Sequence[Evidence], live: Sequence[Pairing]) -> Reason | None:
        """Positive evidence from the finding's whole chain (its evidence), asked once per finding
        with a live pairing that no `support` raised; or None."""
        return None


@dataclass(frozen=True)
class Assessment:
    level: str
    reasons: tuple[Reason, ...]
    live: tuple[Pairing, ...]  # the pairings no signal ruled out
    dead: tuple[tuple[Pairing, Reason], ...]


class _Budget:
    def __init__(self) -> None:
        self.left = MAX_PAIRINGS
        self.cut = 0  # findings assessed on part of their pairings


def partly_assessed(ctx: Context) -> int:
    """How many findings of the run were assessed on part of their pairings (MAX_PAIRINGS)."""
    return ctx.state(_Budget, _Budget).cut


def assess(ctx: Context, pairings: Sequence[Pairing], signals: Iterable[Signal],
           chain: Sequence[Evidence] = ()) -> Assessment:
    """What `signals` (the rule's: Rule.signals) say of a finding's pairings and of its chain
    (the finding's evidence)."""
    signals = list(signals)
    live: list[Pairing] = []
    dead: list[tuple[Pairing, Reason]] = []
    support: list[Reason] = []
    budget = ctx.state(_Budget, _Budget)
    unassessed = 0
    # A finding within the cut is assessed whole even once the budget is spent.
    if len(pairings) > max(budget.left, CUT_PAIRINGS):
        unassessed = len(pairings) - CUT_PAIRINGS
        pairings = pairings[:CUT_PAIRINGS]
        budget.cut += 1
    budget.left = max(budget.left - len(pairings), 0)
    for p in pairings:
        why = next((r for r in (s.rule_out(ctx, p) for s in signals) if r is not None), None)
        if why is not None:
            dead.append((p, why))
            continue
        live.append(p)
        if not support:
            support.extend(r for r in (s.support(ctx, p) for s in signals) if r is not None)
    if not pairings:
        return Assessment(MEDIUM, (), (), ())
    if not live and unassessed:
        # The pairings left unasked may be live: never latent on a part.
        reasons = _distinct(r for _, r in dead)
        return Assessment(MEDIUM, reasons, (), tuple(dead))
    if not live:
        reasons = _distinct(r for _, r in dead)
        return Assessment(LOW, reasons, (), tuple(dead))
    if not support:
        support.extend(r for r in (s.support_chain(ctx, chain, live) for s in signals) if r is not None)
    level = HIGH if support else MEDIUM
    # A kept finding says what held it up, and which of its pairings were ruled out on the way.
    reasons = _distinct([*support, *(r for _, r in dead)])
    return Assessment(level, reasons, tuple(live), tuple(dead))


def _distinct(reasons: Iterable[Reason]) -> tuple[Reason, ...]:
    seen: set[Reason] = set()
    out: list[Reason] = []
    for r in reasons:
        if r not in seen:
            seen.add(r)
            out.append(r)
        if len(out) == MAX_REASONS:
            break
    return tuple(out)

