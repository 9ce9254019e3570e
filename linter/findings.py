"""What the engine reports: small frozen records that every formatter renders the same way."""

from __future__ import annotations

import dataclasses
import functools
import typing
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
    # The link is a declared type standing in for what the code puts there (an annotation, a cast,
    # an `isinstance` test): any subclass fits it (signals/built_chain.py reads it).
    declared: bool = False


def shortened(links, n: int) -> tuple[Evidence, ...]:
    """The first `n` links of a chain, then every declared link after them as a supporting one: a
    chain cut short for the report still carries where it leaned on a declared type
    (signals/built_chain.py reads that). A supporting declared link (a binding's annotation, which
    the chain shows only with --verbose) never takes a place among the `n`."""
    window: list[Evidence] = []
    rest: list[Evidence] = []
    for e in links:
        if e.declared and e.supporting:
            rest.append(e)
        elif len(window) < n:
            window.append(e)
        elif e.declared:
            rest.append(dataclasses.replace(e, supporting=True))
    return (*window, *rest)


def superseded(links) -> tuple[Evidence, ...]:
    """A chain whose answer a later, fuller one replaced (every construction, every assignment
    followed): its declared links no longer stand in for what the code puts there."""
    return tuple(dataclasses.replace(e, declared=False) if e.declared else e for e in links)


def tail(links, k: int) -> tuple[Evidence, ...]:
    """The last `k` links of a chain, after every declared link before them (as supporting ones):
    `shortened` for a report that shows a chain's end."""
    links = tuple(links)
    return (*(dataclasses.replace(e, supporting=True) for e in links[:-k] if e.declared), *links[-k:])


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
    # The finding's facts on the wire, as (name, text) pairs: its rule's typed record (`Rule.facts`)
    # and the run's (`RunFacts`), each written and read only through its record (`Facts`).
    details: tuple[tuple[str, str], ...] = field(default=(), compare=False)
    # How sure the claim is (linter/model/confidence.py): "high", "medium" or "low" (latent drift).
    confidence: str = field(default=MEDIUM, compare=False)
    confidence_reasons: tuple[Reason, ...] = field(default=(), compare=False)

    @property
    def sort_key(self) -> tuple:
        return (self.path, self.line, self.column, self.code, self.member)

    def with_facts(self, facts: Facts) -> Finding:
        """The finding with `facts` added after the ones it has."""
        return dataclasses.replace(self, details=(*self.details, *facts.pairs()))

    def to_json(self) -> dict:
        return {"code": self.code, "name": self.name, "severity": self.severity, "path": self.path,
                "line": self.line, "column": self.column, "message": self.message, "member": self.member,
                "targets": list(self.targets),
                "evidence": [{"path": e.path, "line": e.line, "note": e.note, "supporting": e.supporting,
                              "declared": e.declared}
                             for e in self.evidence],
                "details": dict(self.details), "identity": RunFacts.of(self).identity,
                "class": self.class_name, "confidence": self.confidence,
                "confidence_reasons": [r.to_json() for r in self.confidence_reasons]}


class Facts:
    """A rule's own facts about one finding, as a typed record the rule declares (a frozen dataclass
    subclassing this one, every field defaulted): `AL001Facts.of(finding).owners`, never a key.

    On the wire (`Finding.details`: the JSON report, SARIF, the cache) each field that holds
    something is one (name, text) pair, in field order: a text as it is, names (`tuple[str, ...]`)
    comma-joined, a flag (`bool`) as "yes" where it is set. `of` reads them back; what a record does
    not declare (another record's facts on the same finding) it leaves alone."""

    @classmethod
    def of(cls, finding: Finding):
        kinds = _field_kinds(cls)
        given: dict[str, object] = {}
        for key, text in finding.details:
            kind = kinds.get(key)
            if kind is None or key in given:
                continue
            given[key] = (text if kind is str else text == "yes" if kind is bool
                          else tuple(x for x in text.split(",") if x))
        return cls(**given)

    def pairs(self) -> tuple[tuple[str, str], ...]:
        out = []
        for name, kind in _field_kinds(type(self)).items():
            value = getattr(self, name)
            if value is None or value is False:
                continue
            out.append((name, "yes" if kind is bool else value if kind is str else ",".join(value)))
        return tuple(out)


@functools.cache
def _field_kinds(cls: type) -> dict[str, type]:
    """Each field's wire form, from its annotation: `str`, `bool` or `tuple` (names)."""
    hints = typing.get_type_hints(cls)
    out: dict[str, type] = {}
    for f in dataclasses.fields(cls):
        args = set(typing.get_args(hints[f.name])) or {hints[f.name]}
        kind = bool if bool in args else str if str in args else tuple if any(
            typing.get_origin(a) is tuple for a in args) else None
        if kind is None:
            raise TypeError(f"{cls.__name__}.{f.name}: a fact is a `str`, a `bool` or a `tuple[str, ...]`")
        out[f.name] = kind
    return out


@dataclass(frozen=True)
class RunFacts(Facts):
    """What the run adds to any rule's finding, after the rule's own facts."""

    latent_impls: tuple[str, ...] | None = None  # the implementations of its ruled-out pairings (Rule.assessed)
    identity: str | None = None  # what it is about, not where it is printed (linter/model/identity.py)
    # With paths asked about (cli.about): the evidence line in them that ties a finding located
    # elsewhere to them.
    cited_in_paths: str | None = None


# The statistic counting the findings RunFacts.cited_in_paths ties to the paths asked about.
CITED_KEY = "cited_in_paths"


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
