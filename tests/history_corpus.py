"""The history corpus as data: real drift fixes from SGLang's releases, and recall on them.

`tests/data/history_corpus.json` holds one case per (release pair, rule, class, member) that a
reading of the code before and after confirmed: a configuration broke (a hook lost, a TypeError, a
lost fast path) in release `before` and works in `after`. `bench/mine_history.py` mined the
candidates; `tests/data/history_corpus_rejected.json` says why every other candidate was left out;
docs/history-corpus.md tells how, and which gap in the analysis each missed case falls into.

A case is *found* in a release when attn-lint reports a finding of the case's rule and member on
the case's class (for AL002 also: a finding whose `targets` name the implementation, `impl`, that
rejects the call; or one on `impl` itself, where an override is checked against its base), and
*fixed* when its `after` release reports no such finding. Used by `tests/test_history_corpus.py`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from packaging.version import Version

CORPUS = Path(__file__).resolve().parent / "data" / "history_corpus.json"
REJECTED = Path(__file__).resolve().parent / "data" / "history_corpus_rejected.json"
RULES = ("AL001", "AL002", "AL003")
DEFAULT_REPORT = ("high", "medium")  # low is latent drift (--show-latent)


def load(path: str | Path = CORPUS) -> dict:
    with open(path, encoding="utf-8") as fh:
        doc = json.load(fh)
    bad = [c.get("id") for c in doc["cases"] if c.get("rule") not in RULES or not c.get("why", "").strip()
           or not c.get("confirmed", "").strip()]
    if bad:
        raise ValueError(f"{path}: cases need a rule in {RULES}, a why and how it was confirmed: {bad}")
    return doc


def releases(doc: dict) -> list[str]:
    """Every release a corpus case needs, in PEP 440 order."""
    return sorted({c["before"] for c in doc["cases"]} | {c["after"] for c in doc["cases"]}, key=Version)


def matches(case: dict, finding: dict) -> bool:
    if finding["code"] != case["rule"] or finding["member"] != case["member"]:
        return False
    impl = case.get("impl")
    if impl and case["rule"] == "AL002":
        # The call's class may still reject another implementation after the fix: what was fixed
        # is this implementation (named in the finding's targets, or checked as an override).
        return finding["class"] == impl or impl in finding.get("targets", ())
    return finding["class"] == case["class"]


def best(case: dict, findings: list[dict]) -> dict | None:
    """The matching finding of highest confidence, if any."""
    hits = [f for f in findings if matches(case, f)]
    order = {"high": 0, "medium": 1, "low": 2}
    return min(hits, key=lambda f: order.get(f.get("confidence") or "medium", 3)) if hits else None


@dataclass
class Outcome:
    case: dict
    before: dict | None  # the best matching finding in the `before` release
    after: dict | None  # a matching finding still reported in the `after` release

    @property
    def confidence(self) -> str:
        return "missed" if self.before is None else (self.before.get("confidence") or "medium")

    @property
    def found(self) -> bool:
        """In the default report of the `before` release."""
        return self.confidence in DEFAULT_REPORT

    @property
    def found_any(self) -> bool:
        """Reported at all (latent drift included)."""
        return self.before is not None


@dataclass
class Recall:
    outcomes: list[Outcome] = field(default_factory=list)

    def found(self) -> tuple[int, int]:
        return sum(o.found for o in self.outcomes), len(self.outcomes)

    def found_any(self) -> tuple[int, int]:
        return sum(o.found_any for o in self.outcomes), len(self.outcomes)

    def missed(self) -> list[Outcome]:
        return [o for o in self.outcomes if not o.found]

    def not_fixed(self) -> list[Outcome]:
        """Cases whose `after` release still reports them (a fix the analysis does not see)."""
        return [o for o in self.outcomes if o.after is not None]

    def table(self) -> str:
        lines = []
        for o in self.outcomes:
            c = o.case
            mark = "found" if o.found else ("latent" if o.found_any else "MISSED")
            after = "  (still reported after)" if o.after is not None else ""
            lines.append(f"  {mark:6} {c['rule']} {c['before']:>13} -> {c['after']:<13} "
                         f"{c['class'].rsplit('.', 1)[-1]}.{c['member']}  [{c['id']}]{after}")
        return "\n".join(lines)


def recall(doc: dict, findings_by_release: dict[str, list[dict]]) -> Recall:
    out = Recall()
    for case in doc["cases"]:
        before = best(case, findings_by_release[case["before"]])
        after = best(case, findings_by_release[case["after"]])
        out.outcomes.append(Outcome(case, before, after))
    return out


def findings_of_release(version: str, cache_dir: str | Path | None) -> list[dict]:
    """Every finding (latent ones too, JSON form) of attn-lint on `sglang/srt` of that release,
    downloaded into the test cache on first use (precision_labels.release_tree). With a cache
    folder, summaries are shared between releases (most files do not change from one release to
    the next) and an unchanged tree with unchanged analysis code is answered from the stored result."""
    from precision_labels import release_tree

    from attn_lint.linter.app.engine import Settings, analyse

    tree = release_tree("sglang", version) / "sglang" / "srt"
    result = analyse([str(tree)], Settings(cache_dir=str(cache_dir) if cache_dir else None))
    errors = [e for e in result.errors if e.kind == "internal-error"]
    if errors:
        raise RuntimeError(f"attn-lint reported internal errors on sglang {version}: {errors[:3]}")
    return [f.to_json() for f in result.findings + list(getattr(result, "latent", []))]


def findings_of_releases(versions: list[str], cache_dir: str | Path | None) -> dict[str, list[dict]]:
    """findings_of_release for each version, the releases downloaded first (one at a time: pip and
    the test cache), then analysed on every core, one release per process: a warm run's tree
    passes and rules use one core each, and the corpus is a score of releases."""
    import os
    from concurrent.futures import ProcessPoolExecutor

    from precision_labels import release_tree
    for version in versions:
        release_tree("sglang", version)
    workers = min(len(versions), os.cpu_count() or 1)
    if workers <= 1:
        return {v: findings_of_release(v, cache_dir) for v in versions}
    with ProcessPoolExecutor(workers) as pool:
        return dict(zip(versions, pool.map(findings_of_release, versions, [cache_dir] * len(versions))))


def load_rejected(path: str | Path = REJECTED) -> list[dict]:
    """The mined candidates left out of the corpus, each with the reason (auditable mining)."""
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)["rejected"]
