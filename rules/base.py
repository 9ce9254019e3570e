"""What a rule is: a code, a name, a doc, its own examples, and a check over the tree model."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, ClassVar

from ..linter.findings import Evidence, Facts, Finding, RunFacts, short, unlabelled
from ..linter.model.uses import Use
from ..linter.refs import is_attr, is_self

if TYPE_CHECKING:  # the rules' modules load without the tree passes (the warm path needs only their codes)
    from ..linter.files.suppress import StaleSuppression
    from ..linter.model.confidence import Pairing, Signal
    from ..linter.model.context import Context


@dataclass(frozen=True)
class NoFacts(Facts):
    """The facts of a rule that passes none on."""


@dataclass(frozen=True)
class RuntimeCheck:
    """How `--verify` checks a rule's finding on the real code (runtime_check/verify.py). The replay
    that reproduces the static fact is registered for the rule's class in runtime_check/scenarios.py
    (`@replays(TheRule)`): the rules load without the code that runs the user's."""

    static_fact: str  # the verdict when it holds ("attribute-hidden"), kebab-case
    meaning: str  # that verdict, for the legend, the docs and JSON/SARIF readers
    gpu_replay: bool = False  # the FlashInfer smoke test can replay the finding on a GPU


@dataclass(frozen=True)
class Reach:
    """What an example puts in front of its rule: a class (short name) and a member whose sites
    the rule reads can be that class. A VALID example passes for the right reason only if its rule
    still reaches it (tests/test_rules_examples.py holds each one to it)."""

    cls: str
    member: str
    wrapper: bool = True  # the class is a wrapper the family model sees


@dataclass(frozen=True)
class Example:
    """A tiny code base (file path -> source) and what the rule must report on it."""

    files: dict[str, str]
    expect: tuple[tuple[str, str], ...] = ()  # (class short name, member) per finding; () for valid
    reaches: Reach | None = None  # for a VALID example: what the rule must still look at


class Rule:
    code: ClassVar[str]
    name: ClassVar[str]
    severity: ClassVar[str]
    summary: ClassVar[str]
    doc: ClassVar[str]  # markdown: what it finds, why it is bad, an example, how to fix
    VALID: ClassVar[list[Example]] = []
    INVALID: ClassVar[list[Example]] = []

    def check(self, ctx: Context) -> Iterable[Finding]:  # pragma: no cover - every rule overrides
        raise NotImplementedError

    # When the rule runs. "tree": `check(ctx)` over the tree model, in the engine, and its findings
    # are assessed (a confidence). "suppressions": `check_suppressions` over the suppression
    # comments that silenced nothing, once every tree rule's findings met them (a comment is
    # unused only against those), in the CLI; such a finding is no claim of drift and has no
    # confidence to gate on (SuppressionRule).
    phase: ClassVar[str] = "tree"
    # Selected only where asked for by name: by a selector that covers it and no rule that is not
    # opt-in (`AL9`, `AL900`; not `ALL` or `AL`), or by the option that turns it on.
    opt_in: ClassVar[bool] = False

    # Which sites the rule reads: "probe" (`hasattr` / `getattr(..., default)`), "call" (`x.m(...)`).
    site_kinds: ClassVar[tuple[str, ...]] = ("probe", "call")
    # Whether a finding's class is always a wrapper the family model sees (not for a caller's).
    subject_is_wrapper: ClassVar[bool] = True

    def reaches(self, ctx: Context, qual: str, member: str) -> bool:
        """Some site of `member` the rule reads has a receiver that can be `qual` (as the rule's
        own `ctx.reaching` sees it): the case is in front of the rule, whatever it decides."""
        uses = []
        if "probe" in self.site_kinds:
            uses += [Use(s, p.receiver, p.line, p.col, "probe", None) for s, p in ctx.probes.get(member, ())]
        if "call" in self.site_kinds:
            uses += [Use(s, t[0], c.line, c.col, "call", None) for s, c, t in ctx.member_calls.get(member, ())]
        return any(True for _ in ctx.reaching(qual, uses))

    # `--fix`: a rule that can fix its findings writes the method the class lacks (fix_method);
    # linter/app/fix.py places it in the file and writes it.
    fixable: ClassVar[bool] = False

    def fix_method(self, ctx: Context, finding: Finding, sources, indent: str) -> str:
        """The source of the method that fixes `finding`, at `indent`; raises
        linter.forwarder.Unfixable with the reason where no safe fix exists."""
        raise NotImplementedError(f"{self.code} has no --fix")

    # `--verify`: how the finding is checked on the real code; None: not checked.
    runtime_check: ClassVar[RuntimeCheck | None] = None
    # The record of the rule's own facts on each finding (what `--verify` replays), read back with
    # `facts.of(finding)`; a rule that passes none on keeps the empty one.
    facts: ClassVar[type[Facts]] = NoFacts

    def verification_pairings(self, ctx: Context, finding: Finding, facts: dict) -> list[tuple] | str:
        """The pairings `--verify` builds through the code's own construction path once the static
        fact holds: (class, delegate attribute or None for `self`, implementations) each; or why
        none is run. `facts`: what the scenario learned (runtime_check/scenarios.py)."""
        return "not run: the rule names no pairing to build"

    # Confidence signals (by name) that do not speak to this rule's claim; every other one is
    # asked of each of its pairings. Each rule says why it skips one.
    skipped_signals: ClassVar[frozenset[str]] = frozenset()

    def signals(self) -> list[Signal]:
        from ..linter import signals
        return [s for s in signals.active_signals() if s.name not in self.skipped_signals]

    def assessed(self, ctx: Context, finding: Finding, pairings: Sequence[Pairing]) -> Finding:
        """The finding with its confidence: what this rule's signals say of the pairings it rests
        on. The implementations of its ruled-out pairings are kept in its RunFacts (`latent_impls`)
        so that latent findings can be grouped per (wrapper, implementation)."""
        from ..linter.model.confidence import assess

        a = assess(ctx, pairings, self.signals(), finding.evidence)
        dead_impls = sorted({p.impl for p, _ in a.dead} - {p.impl for p in a.live})
        if dead_impls:
            finding = finding.with_facts(RunFacts(latent_impls=tuple(dead_impls)))
        return replace(finding, confidence=a.level, confidence_reasons=a.reasons)

    def identity_subject(self, finding: Finding, ctx: Context) -> tuple[str, set[str]]:
        """What the finding is about, for its identity (linter/model/identity.py): the class the fix
        belongs in, by short name, and the roots of its family."""
        from ..linter.model.identity import family_roots
        return short(unlabelled(finding.class_name)), family_roots(ctx, [finding.class_name])

    def finding(self, *, path: str, line: int, column: int, message: str, class_name: str, member: str,
                targets: Iterable[str] = (), evidence: Iterable[Evidence] = (),
                facts: Facts | None = None) -> Finding:
        """A finding of this rule; `facts` is a record of the rule's own type (`facts`)."""
        if facts is not None and not isinstance(facts, self.facts):
            raise TypeError(f"{self.code} declares {self.facts.__name__}, not {type(facts).__name__}")
        return Finding(self.code, self.name, self.severity, path, line, column, message, class_name, member,
                       tuple(targets), tuple(_dedupe(evidence)), facts.pairs() if facts is not None else ())


class SuppressionRule(Rule):
    """A rule about the suppression comments themselves (phase "suppressions"): it reads the
    comments that silenced nothing (linter/files/suppress.py's StaleSuppression records) after the
    tree rules' findings were matched against them, and has nothing to find in the tree model."""

    phase = "suppressions"
    opt_in = True

    def check(self, ctx: Context) -> Iterable[Finding]:
        return ()

    def check_suppressions(self, stale: Iterable[StaleSuppression]) -> Iterable[Finding]:  # pragma: no cover
        raise NotImplementedError


def _dedupe(evidence: Iterable[Evidence]) -> list[Evidence]:
    """Each link once, where it first appears; part of the chain if any copy of it is."""
    at: dict[tuple, int] = {}
    out: list[Evidence] = []
    for e in evidence:
        key = (e.path, e.line, e.note)
        if key not in at:
            at[key] = len(out)
            out.append(e)
        elif not e.supporting:
            out[at[key]] = e
    return out


def delegates_named_in_evidence(ctx: Context, wq: str, wrapper, member: str, owners: Iterable[str]) -> set[str]:
    """For each class that defines `member`, the wrapper's delegate attribute that can hold it
    with the fewest possible classes (a single attribute rather than a list that holds the others
    too): the delegate an evidence chain names."""
    index, model = ctx.index, ctx.model
    options = []
    for d in wrapper.delegates:
        impls = model.implementations(d.types, exclude=wq, exact=d.exact)
        defined_by = {hit.owner for hit in (index.lookup(i, member) for i in impls) if hit is not None}
        options.append((len(impls), d.attr, defined_by))
    options.sort(key=lambda o: o[:2])
    return {next(attr for _, attr, defined_by in options if owner in defined_by)
            for owner in owners if any(owner in o[2] for o in options)}




def calls_on_own_attrs(ctx: Context, qual: str) -> dict[str, list]:
    """The calls `qual`'s methods make on their own attributes (`self.<attr>.m(...)`), by
    attribute: (site, call, member) each."""
    out: dict[str, list] = {}
    for site, call, (recv, member, how) in ctx.self_attr_calls.get(qual, ()):
        fn = site.fn
        if how == "call" and fn.params and recv is not None and is_attr(recv) \
                and is_self(recv[1], fn.params[0].name):
            out.setdefault(recv[2], []).append((site, call, member))
    return out


def hands_own_operations(calls: list) -> bool:
    """Calls on one attribute (calls_on_own_attrs) through which a class hands at least two of its
    own operations on by their own names (`def build(self): self.agent.build()`): a facade over
    that object, not a helper it uses."""
    return len({member for site, _, member in calls if site.fn.name == member}) >= 2


def delegate_pairings(ctx: Context, finding: Finding, keeps) -> list[tuple] | str:
    """For a finding about a wrapper: per delegate attribute, the live implementations it can hold
    whose `finding.member` resolves to a method `keeps(owner)` accepts."""
    model, index = ctx.model, ctx.index
    wrapper = model.wrappers.get(finding.class_name)
    if wrapper is None:
        return f"not run: `{short(finding.class_name)}` is not a wrapper the analysis knows"
    latent = set(RunFacts.of(finding).latent_impls or ())
    wanted = []
    for d in wrapper.delegates:
        impls = []
        for c in model.implementations(d.types):
            hit = index.lookup(c, finding.member)
            if c in latent or hit is None:
                continue
            if keeps(hit.owner):
                impls.append(c)
        if impls:
            wanted.append((finding.class_name, d.attr, impls))
    return wanted
