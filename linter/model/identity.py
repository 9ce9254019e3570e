"""A finding's identity: what it is about, not where it is printed.

Baselines, `--new-since` and SARIF's `partialFingerprints` compare findings across commits. A key
holding the file, the line or the implementations named would call an old finding new when a
module moves, a line shifts or one more implementation joins it. The identity is made only of:

* the rule code;
* the subject: the class the fix belongs in (the wrapper, for AL001 and AL003) or the calling
  function (`Class.method`, for AL002), by short name, so that a module move keeps it;
* the member (the hook, or the method called);
* the family: the short names of the roots of the subject's family (of the implementations
  reached, for a call), which tells apart two classes of one short name in unrelated families.

Two findings may share an identity (two calls of one method in one function): baselines keep a
count. A rule says what its subject is (`Rule.identity_subject`); this module hashes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import TYPE_CHECKING

from ..findings import Finding, RunFacts, short, unlabelled

if TYPE_CHECKING:
    from .context import Context

_SCHEME = "attn-lint-identity/1"


def identity_of(code: str, subject: str, member: str, family: Iterable[str]) -> str:
    key = "\x1f".join([_SCHEME, code, subject, member, ",".join(sorted(set(family)))])
    return hashlib.sha256(key.encode("utf-8", "surrogateescape")).hexdigest()[:32]


def identity(f: Finding) -> str:
    """The identity the engine gave `f`; for a finding made elsewhere (AL900, a finding from an
    older cache entry), one from its class and member alone."""
    given = RunFacts.of(f).identity
    if given is not None:
        return given
    return identity_of(f.code, short(unlabelled(f.class_name)), f.member, ())


def family_roots(ctx: Context, classes: Iterable[str]) -> set[str]:
    """The short names of the family roots of `classes` (a class in no family is its own root)."""
    members = ctx.model.family_members
    out: set[str] = set()
    for qual in classes:
        out |= {short(unlabelled(r)) for r in members.get(qual, ())} or {short(unlabelled(qual))}
    return out


def identified(findings: list[Finding], rules, ctx: Context) -> list[Finding]:
    """The findings, each with its identity in `details`, as its rule defines the subject."""
    by_code = {r.code: r for r in rules}
    out = []
    for f in findings:
        rule = by_code.get(f.code)
        if rule is None or RunFacts.of(f).identity is not None:
            out.append(f)
            continue
        subject, family = rule.identity_subject(f, ctx)
        out.append(f.with_facts(RunFacts(identity=identity_of(f.code, subject, f.member, family))))
    return out
