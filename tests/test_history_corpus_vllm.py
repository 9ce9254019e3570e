"""Recall on real drift fixed in vLLM's releases: vLLM is a development engine, like SGLang.

tests/data/history_corpus_vllm.json holds one case per (release pair, rule, class, member) that a
reading of the code before and after confirmed (docs/history-corpus.md, section "vLLM"); the
candidates left out are in tests/data/history_corpus_vllm_rejected.json, each with its reason. The
schema and the matching are tests/history_corpus.py's.

The cases need 30 vLLM releases. A vLLM wheel is 300 to 500 MB and the analysis of all of them
takes about 140 s, so the recall tests run only when asked for, with ATTN_LINT_VLLM_HISTORY=1 (the
wheels are fetched by bench/mine_history.fetch_release, the helper the mining used, and only their
.py files are kept under the test cache's history-vllm/); otherwise they are skipped with that
reason, and `.ci/run` stays well inside its time. Each release is linted once, with the lint cache the other corpus
tests use (about 4 s a release cold on two cores).

RECALL_FLOOR is a ratchet on today's measured recall: raise it as gaps close.
"""

from __future__ import annotations

import os

import history_corpus as hc
import pytest
from precision_labels import cache_root
from test_history_corpus_beyond import _mine_history, findings_of_release

from attn_lint.linter.app.engine import Settings  # noqa: F401  (the engine must import before the corpus runs)

CORPUS = hc.Path(__file__).resolve().parent / "data" / "history_corpus_vllm.json"
REJECTED = hc.Path(__file__).resolve().parent / "data" / "history_corpus_vllm_rejected.json"
# Measured 2026-12-06 (found in the default report, found at any confidence, cases).
RECALL_FLOOR = (18, 20, 28)


def _have(version: str) -> bool:
    return (_mine_history().releases_root("vllm") / f"vllm-{version}" / "vllm").is_dir()


@pytest.fixture(scope="module")
def vllm_recall() -> hc.Recall:
    doc = hc.load(CORPUS)
    versions = hc.releases(doc)
    if os.environ.get("ATTN_LINT_VLLM_HISTORY") != "1":
        missing = sum(1 for v in versions if not _have(v))
        pytest.skip(f"the vLLM history corpus needs {len(versions)} releases (a wheel is 300-500 MB; {missing} not in "
                    f"the test cache) and about 140 s of analysis: set ATTN_LINT_VLLM_HISTORY=1 to run it")
    # A lint cache of its own: its 30 releases of vLLM would otherwise push the summaries of the
    # default suite's histories (SGLang's, beyond) past the cache's size bound, and every later
    # run of those would parse them again.
    cache_dir = cache_root() / "history-lint-cache-vllm"
    findings = {}
    for version in versions:
        try:
            findings[version] = findings_of_release("vllm", doc["tree"], version, cache_dir)
        except RuntimeError as exc:
            if "PyPI" in str(exc):
                pytest.skip(str(exc))
            raise
    result = hc.recall(doc, findings)
    (f, n), (fa, _) = result.found(), result.found_any()
    fixes = len({c["fix"] for c in doc["cases"]})
    print(f"\nvLLM history corpus: {n} cases in {fixes} fixes; recall {f}/{n} = {f / n:.0%} in the default report, "
          f"{fa}/{n} = {fa / n:.0%} at any confidence\n" + result.table())
    return result


@pytest.mark.network
@pytest.mark.slow
def test_recall_never_falls(vllm_recall):
    floor, floor_any, cases = RECALL_FLOOR
    (f, n), (fa, _) = vllm_recall.found(), vllm_recall.found_any()
    missed = ", ".join(o.case["id"] for o in vllm_recall.missed())
    assert n == cases, f"{n} cases, RECALL_FLOOR says {cases}: update the floor with the corpus"
    assert f >= floor, f"recall {f}/{n} fell below {floor}/{n}; missed: {missed}"
    assert fa >= floor_any, f"recall at any confidence {fa}/{n} fell below {floor_any}/{n}"


@pytest.mark.network
@pytest.mark.slow
def test_every_fixed_release_is_clean(vllm_recall):
    still = vllm_recall.not_fixed()
    assert not still, "reported after the fix:\n" + "\n".join(
        f"  {o.case['id']}: {o.after['path']}:{o.after['line']} ({o.after.get('confidence')})" for o in still)


def test_the_corpus_files_are_well_formed():
    doc = hc.load(CORPUS)
    assert doc["package"] == "vllm" and doc["tree"] == "vllm"
    ids = [c["id"] for c in doc["cases"]]
    assert len(ids) == len(set(ids)) == RECALL_FLOOR[2] >= 20  # issue 37: at least 20 confirmed cases
    for c in doc["cases"]:
        assert c["class"].startswith("vllm.") and c["member"] and c["file"].endswith(".py"), c["id"]
        assert hc.Version(c["before"]) < hc.Version(c["after"]), c["id"]
        assert c["fix"] and c["mined_as"], c["id"]
        assert c["rule"] != "AL002" or c.get("impl", "").startswith("vllm."), c["id"]
    rejected = hc.load_rejected(REJECTED)
    assert rejected and all(r["reason"].strip() and r["kind"] for r in rejected)
    accepted = {(c["before"], c["class"], c["member"]) for c in doc["cases"]}
    assert not accepted & {(r["before"], r["class"], r["member"]) for r in rejected if r.get("class")}
