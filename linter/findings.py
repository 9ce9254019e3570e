"""What the engine reports: small frozen records that every formatter renders the same way."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field


def short(qual: str) -> str:
    """A qualified class name as findings show it: `pkg.mod.Cls` -> `Cls`."""
    return qual.rsplit(".", 1)[-1]


def unlabelled(name: str) -> str:
    """A module or class name without the project label the index gives projects that share
    package names (index._separate_projects): `fixtures:serving.x.C` -> `serving.x.C`."""
    return name.rpartition(":")[2]



# How sure a claim is, in rising order (linter/model/confidence.py assesses it): `low` is latent drift.
LOW, MEDIUM, HIGH = "low", "medium", "high"
LEVELS = (LOW, MEDIUM, HIGH)

@dataclass(frozen=True)
class Evidence:
    """One link in the chain that makes a finding true. A `supporting` link backs the chain up
    without being needed to follow it (more probe sites, how a delegate was found): the text and
    GitHub reports show it with --verbose; JSON and SARIF always carry it."""

    path: str
    line: int
    note: str
    supporting: bool = False


@dataclass(frozen=True)
class Reason:
    """Why a finding's confidence is what it is: one signal's word on one of its pairings."""

    signal: str  # the signal's name (linter/signals/)
    effect: str  # "lower": it rules a pairing out; "raise": it supports one
    path: str
    line: int
    note: str

    def to_json(self) -> dict:
        return {"signal": self.signal, "effect": self.effect, "path": self.path, "line": self.line,
                "note": self.note}


@dataclass(frozen=True)
class Finding:
    code: str
    name: str
    severity: str
    path: str
    line: int
    column: int
    message: str
    class_name: str  # the class where the fix belongs (qualified name)
    member: str  # the hook or the called method
    targets: tuple[str, ...] = ()
    evidence: tuple[Evidence, ...] = ()
    # Extra machine-readable facts a rule wants to pass on (for example, to runtime_check).
    details: tuple[tuple[str, str], ...] = field(default=(), compare=False)
    # How sure the claim is (linter/model/confidence.py): "high", "medium" or "low" (latent drift).
    confidence: str = field(default=MEDIUM, compare=False)
    confidence_reasons: tuple[Reason, ...] = field(default=(), compare=False)

    @property
    def sort_key(self) -> tuple:
        return (self.path, self.line, self.column, self.code, self.member)

    def detail(self, key: str) -> str | None:
        """One of the facts the rule passed on (its `details`), as text; None if it has none."""
        for k, v in self.details:
            if k == key:
                return v
        return None

    def detail_list(self, key: str) -> tuple[str, ...]:
        """A detail that names several things (kept as one comma-joined text: `details_of`)."""
        value = self.detail(key)
        return tuple(x for x in value.split(",") if x) if value else ()

    def to_json(self) -> dict:
        return {"code": self.code, "name": self.name, "severity": self.severity, "path": self.path,
                "line": self.line, "column": self.column, "message": self.message, "member": self.member,
                "targets": list(self.targets),
                "evidence": [{"path": e.path, "line": e.line, "note": e.note, "supporting": e.supporting}
                             for e in self.evidence],
                "details": dict(self.details), "identity": dict(self.details).get("identity"),
                "class": self.class_name, "confidence": self.confidence,
                "confidence_reasons": [r.to_json() for r in self.confidence_reasons]}


# A finding's detail set by the report filter (cli.about): the evidence line, in the paths asked
# about, that ties a finding located elsewhere to them.
CITED_KEY = "cited_in_paths"


def details_of(**facts: str | Iterable[str]) -> tuple[tuple[str, str], ...]:
    """A finding's `details` from named facts: text as it is, a sequence of names comma-joined
    (Finding.detail_list reads it back). The one place that knows how details are kept."""
    return tuple((k, v if isinstance(v, str) else ",".join(v)) for k, v in facts.items())


@dataclass(frozen=True)
class FileError:
    """A per-file problem (bad input); the run goes on without that file, or (`skipped` False)
    with part of what it says."""

    path: str
    # syntax-error, decode-error, binary, unreadable, missing-path, too-large, symlink-loop,
    # link-outside, too-complex, internal-error; too-deep (analysed in part)
    kind: str
    message: str
    line: int = 0

    @property
    def skipped(self) -> bool:
        return self.kind != "too-deep"

    @property
    def outcome(self) -> str:
        """What became of the file, as the reports say it."""
        return "file skipped" if self.skipped else "file analysed in part"

    def to_json(self) -> dict:
        return asdict(self)
