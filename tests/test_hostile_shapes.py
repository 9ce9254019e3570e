"""Shapes a hostile repository can plant to make the analysis slow or large (tests/hostile_shapes.py):
each run stays within a budget of time and memory, asserted loosely (a budget, not a benchmark:
CI machines are slow and busy). Before the walks were memoised and bounded, the 10,000-deep chain
took over 300 s and 5 GB, the unbuilt family 54 s, and the long display gigabytes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest
from hostile_shapes import deep_chain, long_display, wide_family

from attn_lint.linter.app import engine
from attn_lint.linter.app.engine import Settings, analyse

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="peak memory is read from Linux's rusage")

MEASURE = """
import json, resource, subprocess, sys, time
start = time.monotonic()
proc = subprocess.run([sys.executable, "-m", "attn_lint", "--no-server", "--no-cache", "--format", "json",
                       *sys.argv[1:]], capture_output=True, text=True)
print(json.dumps({"seconds": time.monotonic() - start, "rc": proc.returncode, "stdout": proc.stdout,
                  "stderr": proc.stderr[-2000:],
                  "peak": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024}))
"""


def measured(*args: str) -> dict:
    """The command line's run in a process of its own: seconds, exit status, report, peak memory."""
    out = subprocess.run([sys.executable, "-c", MEASURE, *args], capture_output=True, text=True, timeout=600,
                         env={**os.environ, "CI": "1"})
    return json.loads(out.stdout)


@linux_only
def test_a_chain_ten_thousand_classes_deep(tmp_path):
    root = deep_chain(tmp_path / "deep", 10_000)
    got = measured(str(root))
    assert got["rc"] == 1, got["stderr"]  # the diagnostic below: the file was analysed in part
    doc = json.loads(got["stdout"])
    (error,) = doc["errors"]
    assert error["kind"] == "too-deep" and "`C4999` and 5001 more" in error["message"], error
    assert got["seconds"] < 30, got["seconds"]
    assert got["peak"] < 600 * 2**20, got["peak"] / 2**20


def test_a_chain_just_within_the_depth_is_whole(tmp_path):
    from attn_lint.linter.model.index import MAX_DEPTH
    root = deep_chain(tmp_path / "deep", MAX_DEPTH - 2)  # the wrapper MAX_DEPTH levels below Base
    result = analyse([str(root)], Settings(cache_dir=None))
    assert result.errors == []


@linux_only
def test_a_wide_family_nothing_builds(tmp_path):
    """300 wrappers whose delegates only an annotation types, 300 implementations, 4 hooks: every
    implementation is possible everywhere, 360,000 pairings (54 s before; 6 s here). Each finding
    is still reported; past the run's pairing budget each is assessed on part of its pairings,
    never made latent by it."""
    root = wide_family(tmp_path / "wide", 300, 300, 4, built=False)
    got = measured(str(root))
    assert got["rc"] == 1, got["stderr"]
    doc = json.loads(got["stdout"])
    assert len(doc["findings"]) == 1200 and doc["stats"]["latent"] == 0
    assert doc["stats"]["partly_assessed"] > 0
    assert got["seconds"] < 30, got["seconds"]
    assert got["peak"] < 1024 * 2**20, got["peak"] / 2**20


def test_a_long_display_is_a_diagnostic_within_the_files_memory(tmp_path, monkeypatch):
    """A 3 MB list display: its syntax tree takes far more than the bound given here, so it is a
    `too-complex` diagnostic, and the process that ran the analysis stays small."""
    monkeypatch.setattr(engine, "FILE_MEMORY", 256 * 2**20)
    root = long_display(tmp_path / "long", 3)
    start = time.monotonic()
    result = analyse([str(root)], Settings(cache_dir=None))
    (error,) = result.errors
    assert error.kind == "too-complex" and error.message == engine._OVER_MEMORY
    assert time.monotonic() - start < 60


def test_a_long_display_in_the_pool_is_a_diagnostic_too(tmp_path, monkeypatch):
    monkeypatch.setattr(engine, "FILE_MEMORY", 256 * 2**20)
    monkeypatch.setattr(engine, "PARALLEL_THRESHOLD", 2)
    root = long_display(tmp_path / "long", 3)
    result = analyse([str(root)], Settings(cache_dir=None, jobs=2))
    (error,) = result.errors
    assert error.kind == "too-complex" and error.message == engine._OVER_MEMORY
