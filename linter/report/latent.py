"""Latent drift: low-confidence findings, grouped per (wrapper, delegate implementation).

A finding is `low` when every pairing it rests on was ruled out (linter/model/confidence.py): the drift
is real in the code, but no configuration the code can build reaches it. Such findings come in
bunches: one unsupported wrapper + implementation pairing hides every hook the implementation
defines. A maintainer judges the pairing once, so the reports show one line per pairing, with the
members it hides and the first reason it was ruled out.

The implementations of a finding's ruled-out pairings are its `RunFacts.latent_impls`
(Rule.assessed, rules/base.py); a finding without them is grouped under its class alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..findings import Finding, Reason, RunFacts, short
from .printable import printable


@dataclass
class LatentGroup:
    wrapper: str  # qualified name of the class the findings are about
    impl: str  # qualified name of the ruled-out implementation ("" when the findings name none)
    findings: list[Finding] = field(default_factory=list)

    @property
    def first(self) -> Finding:
        return self.findings[0]

    @property
    def codes(self) -> list[str]:
        return sorted({f.code for f in self.findings})

    @property
    def members(self) -> list[str]:
        return sorted({f.member for f in self.findings})

    @property
    def reasons(self) -> list[Reason]:
        """The reasons that ruled this pairing out; those that name the implementation first."""
        seen: dict[Reason, None] = {}
        for f in self.findings:
            for r in f.confidence_reasons:
                if r.effect == "lower":
                    seen.setdefault(r)
        name = short(self.impl) if self.impl else ""
        return sorted(seen, key=lambda r: not (name and name in r.note))

    def to_json(self) -> dict:
        return {"wrapper": self.wrapper, "impl": self.impl or None, "codes": self.codes, "members": self.members,
                "count": len(self.findings), "path": self.first.path, "line": self.first.line,
                "reasons": [r.to_json() for r in self.reasons]}


def groups(findings: list[Finding]) -> list[LatentGroup]:
    """One group per (wrapper, ruled-out implementation), in the order of their first finding."""
    out: dict[tuple[str, str], LatentGroup] = {}
    for f in findings:
        impls = list(RunFacts.of(f).latent_impls or ()) or [""]
        for impl in impls:
            out.setdefault((f.class_name, impl), LatentGroup(f.class_name, impl)).findings.append(f)
    return list(out.values())


def pairing(g: LatentGroup) -> str:
    return f"{short(g.wrapper)} + {short(g.impl)}" if g.impl else short(g.wrapper)


def reason_text(r: Reason) -> str:
    return f"{r.path}:{r.line}: [{r.signal}] {r.note}"


def summary(g: LatentGroup) -> str:
    """The pairing, what it hides, and why it cannot run (the first reason)."""
    n = len(g.findings)
    text = f"{pairing(g)} hides {', '.join(g.codes)} {', '.join(g.members)}" + (f" ({n} findings)" if n > 1 else "")
    why = g.reasons
    if why:
        text += f"; ruled out: {reason_text(why[0])}"
    return printable(text)


def line(g: LatentGroup) -> str:
    """The group as one line: where its first finding is, then its summary."""
    return printable(f"{g.first.path}:{g.first.line}: ") + summary(g)


def heading(findings: list[Finding], n_groups: int) -> str:
    n = len(findings)
    return (f"Latent drift: {n} low-confidence finding{'s' if n != 1 else ''} in {n_groups} "
            f"pairing{'s' if n_groups != 1 else ''} the code never builds")
