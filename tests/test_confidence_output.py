"""Confidence in every output format; the default report, --show-latent and the latent section;
baselines, suppressions, --fix, --changed-files and the result cache with latent findings.

A latent (low-confidence) finding is made by a real signal defined here, registered in place of the
project's signals: it rules out every pairing with one named implementation, and supports the
pairings of another, as a signal reading the code would.
"""

from __future__ import annotations

import json
import os
import pathlib

import jsonschema
import pytest
from click.testing import CliRunner

from attn_lint.linter import signals
from attn_lint.linter.app.cli import main
from attn_lint.linter.findings import Reason, short
from attn_lint.linter.model.confidence import Signal

SCHEMA = pathlib.Path(__file__).parent / "data" / "sarif-schema-2.1.0.json"

_BACKENDS = '''
class Backend:
    def forward(self, batch):
        raise NotImplementedError


class FlashBackend(Backend):
    def forward(self, batch):
        return batch

    def plan_chunks(self, batch):
        self.planned = batch

    def plan_decode(self, batch):
        self.decoded = batch


class HybridBackend(Backend):
    def __init__(self, full_attn_backend: Backend):
        self.full_attn_backend = full_attn_backend

    def forward(self, batch):
        return self.full_attn_backend.forward(batch)
'''
_MODEL = '''
from {pkg}.backends import Backend


def prefill(backend: Backend, batch):
    if hasattr(backend, "plan_chunks"):
        backend.plan_chunks(batch)
    if hasattr(backend, "plan_decode"):
        backend.plan_decode(batch)
    return backend.forward(batch)
'''


class RulesOutImpl(Signal):
    """Rules out the pairings with the implementations in `dead`, supports those in `alive`."""

    name = "test-never-built"
    doc = "test-only: the named implementations are never built."

    def __init__(self, dead=(), alive=()):
        self.dead, self.alive = set(dead), set(alive)

    def _reason(self, ctx, p, effect, note):
        cls = ctx.index.classes[p.impl]
        return Reason(self.name, effect, cls.file.display, cls.info.line, note)

    def rule_out(self, ctx, p):
        if p.impl in self.dead:
            return self._reason(ctx, p, "lower", f"`{short(p.impl)}` is never built")
        return None

    def support(self, ctx, p):
        if p.impl in self.alive:
            return self._reason(ctx, p, "raise", f"`{short(p.impl)}` is built here")
        return None


@pytest.fixture()
def tree(tmp_path):
    """Two copies of a wrapper hiding two hooks: `live` stays in the report, `dead` is latent."""
    for pkg in ("live", "dead"):
        (tmp_path / pkg).mkdir()
        (tmp_path / pkg / "__init__.py").touch()
        (tmp_path / pkg / "backends.py").write_text(_BACKENDS)
        (tmp_path / pkg / "model.py").write_text(_MODEL.format(pkg=pkg))
    return tmp_path


@pytest.fixture()
def signal(monkeypatch):
    sig = RulesOutImpl(dead={"dead.backends.FlashBackend"}, alive={"live.backends.FlashBackend"})
    monkeypatch.setattr(signals, "active_signals", lambda: [sig])
    return sig


def run(cwd, *args, cache=False):
    old = os.getcwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(main, [*(() if cache else ("--no-cache",)), *args], catch_exceptions=False)
    finally:
        os.chdir(old)


def _line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def test_the_signal_sets_the_levels(tree, signal):
    doc = json.loads(run(tree, "--format", "json", "--show-latent", ".").stdout)
    assert {(f["class"], f["member"], f["confidence"]) for f in doc["findings"]} == {
        ("live.backends.HybridBackend", "plan_chunks", "high"), ("live.backends.HybridBackend", "plan_decode", "high")}
    assert {(f["class"], f["member"], f["confidence"]) for f in doc["latent"]} == {
        ("dead.backends.HybridBackend", "plan_chunks", "low"), ("dead.backends.HybridBackend", "plan_decode", "low")}


def test_default_report_leaves_latent_out_and_exits_on_the_rest(tree, signal):
    r = run(tree, ".")
    assert r.exit_code == 1
    assert "live/backends.py" in r.stdout and "dead/" not in r.stdout
    assert "Latent drift" not in r.stdout
    assert "2 latent (low confidence; --show-latent lists them)" in r.stderr
    assert "AL001 [error] [high] `HybridBackend` hides method `plan_chunks`" in r.stdout
    # the reason that raised it, as an evidence line: path:line: [signal] note
    line = _line_of(_BACKENDS, "class FlashBackend")
    assert f"raised: live/backends.py:{line}: [test-never-built] `FlashBackend` is built here" in r.stdout


def test_only_latent_findings_exit_zero(tree, signal):
    signal.dead.add("live.backends.FlashBackend")
    r = run(tree, ".")
    assert r.exit_code == 0, r.stdout
    assert "No findings in " in r.stdout
    r = run(tree, "--show-latent", ".")
    assert r.exit_code == 0  # shown, never failing the run


def test_show_latent_groups_per_pairing(tree, signal):
    r = run(tree, "--show-latent", ".")
    assert r.exit_code == 1
    assert "Latent drift: 2 low-confidence findings in 1 pairing" in r.stdout
    (group,) = [ln for ln in r.stdout.splitlines() if "HybridBackend + FlashBackend hides" in ln]
    line = _line_of(_BACKENDS, "class FlashBackend")
    assert group.strip() == (f"dead/backends.py:{_line_of(_BACKENDS, 'class HybridBackend')}: HybridBackend + "
                             f"FlashBackend hides AL001 plan_chunks, plan_decode (2 findings); ruled out: "
                             f"dead/backends.py:{line}: [test-never-built] `FlashBackend` is never built")
    assert "dead/model.py" not in r.stdout.split("Latent drift")[0]


def test_show_latent_from_the_configuration(tree, signal):
    (tree / "pyproject.toml").write_text("[tool.attn-lint]\nshow-latent = true\n")
    assert "Latent drift" in run(tree, ".").stdout
    r = run(tree, "--show-settings")
    assert any(ln.startswith("show-latent") and "= true" in ln and "pyproject.toml" in ln
               for ln in r.stdout.splitlines())
    (tree / "pyproject.toml").write_text("[tool.attn-lint]\nshow-latent = \"yes\"\n")
    r = run(tree, ".")
    assert r.exit_code == 2 and "`show-latent` must be true or false" in r.stderr


def test_concise(tree, signal):
    lines = run(tree, "--format", "concise", ".").stdout.splitlines()
    assert len(lines) == 2 and all(" AL001 [error] [high] " in ln for ln in lines)
    lines = run(tree, "--format", "concise", "--show-latent", ".").stdout.splitlines()
    assert len(lines) == 3
    assert lines[2].startswith("dead/backends.py:") and ":1: latent HybridBackend + FlashBackend hides AL001 " \
                                                        "plan_chunks, plan_decode (2 findings); ruled out: " in lines[2]


def test_json(tree, signal):
    doc = json.loads(run(tree, "--format", "json", ".").stdout)
    assert "latent" not in doc and "latent_groups" not in doc
    assert doc["stats"]["latent"] == 2 and doc["stats"]["by_confidence"] == {"high": 2, "medium": 0, "low": 2}
    (f, _) = doc["findings"]
    assert f["confidence"] == "high"
    assert f["confidence_reasons"] == [{"signal": "test-never-built", "effect": "raise", "path": "live/backends.py",
                                        "line": _line_of(_BACKENDS, "class FlashBackend"),
                                        "note": "`FlashBackend` is built here"}]
    doc = json.loads(run(tree, "--format", "json", "--show-latent", ".").stdout)
    assert len(doc["latent"]) == 2 and all(f["details"]["latent_impls"] == "dead.backends.FlashBackend"
                                           for f in doc["latent"])
    (g,) = doc["latent_groups"]
    assert g["wrapper"] == "dead.backends.HybridBackend" and g["impl"] == "dead.backends.FlashBackend"
    assert g["members"] == ["plan_chunks", "plan_decode"] and g["codes"] == ["AL001"] and g["count"] == 2
    assert g["reasons"][0]["signal"] == "test-never-built" and g["reasons"][0]["effect"] == "lower"


def test_sarif(tree, signal):
    schema = json.loads(SCHEMA.read_text())
    doc = json.loads(run(tree, "--format", "sarif", ".").stdout)
    jsonschema.validate(doc, schema)
    results = doc["runs"][0]["results"]
    assert len(results) == 2
    assert all(r["rank"] == 90.0 and r["level"] == "error" and r["properties"]["confidence"] == "high"
               and r["properties"]["confidence_reasons"][0]["signal"] == "test-never-built" for r in results)
    doc = json.loads(run(tree, "--format", "sarif", "--show-latent", ".").stdout)
    jsonschema.validate(doc, schema)
    latent = [r for r in doc["runs"][0]["results"] if r["properties"].get("latent")]
    assert len(latent) == 2
    assert all(r["level"] == "note" and r["rank"] == 20.0 and r["properties"]["confidence"] == "low" for r in latent)


def test_github(tree, signal):
    lines = run(tree, "--format", "github", ".").stdout.splitlines()
    assert len(lines) == 2 and all("(confidence: high)" in ln and "[test-never-built]" in ln for ln in lines)
    lines = run(tree, "--format", "github", "--show-latent", ".").stdout.splitlines()
    assert len(lines) == 3 and lines[2].startswith("::notice file=dead/backends.py,")
    assert "HybridBackend + FlashBackend hides AL001 plan_chunks, plan_decode" in lines[2]


def test_statistics(tree, signal):
    r = run(tree, "--statistics", ".")
    assert r.stdout.splitlines()[:2] == ["2  AL001  unforwarded-hook  [error]  high 2", "Found 2 findings."]
    r = run(tree, "--statistics", "--show-latent", ".")
    assert r.stdout.splitlines()[:2] == ["2  AL001  unforwarded-hook  [error]  high 2, latent 2",
                                         "Found 2 findings and 2 latent."]
    (row,) = json.loads(run(tree, "--statistics", "--format", "json", "--show-latent", ".").stdout)
    assert row["count"] == 2 and row["confidence"] == {"high": 2, "medium": 0, "low": 2}


def test_baseline_ignores_confidence(tree, signal):
    """A baseline records latent findings too, with or without --show-latent: a finding that changes
    level later is not new."""
    for flags in ((), ("--show-latent",)):
        r = run(tree, "--write-baseline", "b.json", *flags, ".")
        assert r.exit_code == 0 and "wrote 4 findings" in r.stderr
        signal.dead = {"live.backends.FlashBackend"}  # the levels swap: none of the findings is new
        doc = json.loads(run(tree, "--baseline", "b.json", "--format", "json", "--show-latent", ".").stdout)
        assert doc["findings"] == [] and doc["latent"] == [] and doc["stats"]["baselined"] == 4
        signal.dead = {"dead.backends.FlashBackend"}


def test_suppressing_a_latent_finding_is_a_used_suppression(tree, signal):
    path = tree / "dead" / "backends.py"
    path.write_text(_BACKENDS.replace("class HybridBackend(Backend):", "class HybridBackend(Backend):  # noqa: AL001"))
    doc = json.loads(run(tree, "--format", "json", "--show-latent", "--report-unused-suppressions", ".").stdout)
    assert doc["latent"] == [] and doc["stats"]["suppressed"] == 2
    assert not [f for f in doc["findings"] if f["code"] == "AL900"]


def test_fix_leaves_latent_findings_unless_shown(tree, signal):
    r = run(tree, "--fix", ".")
    assert "fixed 2 findings in 1 file" in r.stderr
    forwarders = lambda pkg: (tree / pkg / "backends.py").read_text().count("def plan_chunks") - 1  # noqa: E731
    assert (forwarders("live"), forwarders("dead")) == (1, 0)
    r = run(tree, "--fix", "--show-latent", ".")
    assert r.exit_code == 0 and "fixed 2 findings in 1 file" in r.stderr
    assert (forwarders("live"), forwarders("dead")) == (1, 1)


def test_changed_files_filter_treats_latent_alike(tree, signal):
    old = os.getcwd()
    os.chdir(tree)
    try:
        r = CliRunner().invoke(main, ["--no-cache", "--changed-files", "--format", "json", "--show-latent",
                                      "dead/model.py"])
    finally:
        os.chdir(old)
    doc = json.loads(r.stdout)
    assert r.exit_code == 0 and doc["findings"] == [] and len(doc["latent"]) == 2


def test_cached_result_keeps_confidence(tree, signal, tmp_path_factory):
    cache = str(tmp_path_factory.mktemp("cache"))
    first = json.loads(run(tree, "--cache-dir", cache, "--no-server", "--format", "json", "--show-latent", ".",
                           cache=True).stdout)
    again = json.loads(run(tree, "--cache-dir", cache, "--no-server", "--format", "json", "--show-latent", ".",
                           cache=True).stdout)
    assert again["stats"].get("reused_result") is True
    for key in ("findings", "latent", "latent_groups"):
        assert again[key] == first[key]
