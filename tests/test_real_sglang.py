"""Real code: sglang wheels from PyPI, before the fix, with the flawed fix, and fixed.

Downloads at test time (`pip download`), unpacks only `sglang/*`, and keeps both under
$ATTN_LINT_TEST_CACHE (default ~/.cache/attn-lint-tests) so later runs reuse them. Skipped, with the
reason, when the registry cannot be reached. Each tree is analysed once (module-scoped fixtures).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from precision_labels import release_tree, summary_cache

from attn_lint.linter.app.engine import Settings, analyse

pytestmark = pytest.mark.network

HOOK = "init_mha_chunk_metadata"
WRAPPER = "HybridLinearAttnBackend"
TRT = "TRTLLMMLABackend"


def sglang_tree(version: str) -> Path:
    """The folder holding `sglang/` of that release; downloaded and unpacked on first use.
    Skips, with pip's reason, when the registry cannot be reached."""
    try:
        return release_tree("sglang", version)
    except RuntimeError as exc:
        pytest.skip(str(exc))


def _analyse(path: Path, tmp_path_factory):
    assert path.is_dir(), path
    cache = summary_cache()
    return analyse([str(path)], Settings(cache_dir=cache.dir), cache=cache)


@pytest.fixture(scope="module")
def v0_5_12_post1(tmp_path_factory):
    return _analyse(sglang_tree("0.5.12.post1") / "sglang" / "srt", tmp_path_factory)


@pytest.fixture(scope="module")
def v0_5_13(tmp_path_factory):
    return _analyse(sglang_tree("0.5.13") / "sglang" / "srt", tmp_path_factory)


@pytest.fixture(scope="module")
def v0_5_23(tmp_path_factory):
    """The whole package (4,719 files): `sglang/srt` is inside it."""
    return _analyse(sglang_tree("0.5.23") / "sglang", tmp_path_factory)


def _al001_hidden_hook(result):
    return [f for f in result.findings
            if f.code == "AL001" and f.class_name.endswith("." + WRAPPER) and f.member == HOOK]


def _al002_trt(result):
    return [f for f in result.findings
            if f.code == "AL002" and f.member == HOOK and any(t.endswith("." + TRT) for t in f.targets)]


def _no_internal_errors(result):
    bad = [e for e in result.errors if e.kind == "internal-error"]
    assert bad == [], bad[:5]


def test_0_5_12_post1_wrapper_hides_the_hook(v0_5_12_post1):
    hits = _al001_hidden_hook(v0_5_12_post1)
    assert len(hits) == 1, [(f.code, f.class_name, f.member) for f in v0_5_12_post1.findings]
    (f,) = hits
    assert f.path.endswith("hybrid_linear_attn_backend.py")
    assert not f.path.startswith("sglang/"), "paths are relative to the folder given"
    # the evidence names the model probe (forward_mha.py, the seed's crash site)
    assert any(e.path.endswith("forward_mha.py") for e in f.evidence), f.evidence
    # the owners include a FlashInfer MLA implementation of the hook
    assert any("FlashInferMLA" in t for t in f.targets), f.targets
    _no_internal_errors(v0_5_12_post1)


def test_0_5_13_flawed_fix_is_a_type_error_for_trtllm(v0_5_13):
    hits = _al002_trt(v0_5_13)
    assert hits, [(f.code, f.class_name, f.member, f.targets) for f in v0_5_13.findings if f.member == HOOK]
    f = hits[0]
    assert f.class_name.endswith(WRAPPER)
    assert "takes 2 positional arguments but 3 were given" in f.message
    assert not _al001_hidden_hook(v0_5_13), "the wrapper now defines the hook"
    _no_internal_errors(v0_5_13)


def test_0_5_23_is_fixed(v0_5_23):
    assert not _al001_hidden_hook(v0_5_23)
    assert not _al002_trt(v0_5_23)


def test_0_5_23_whole_package_without_internal_errors(v0_5_23):
    result = v0_5_23
    assert result.stats["files"] > 4000
    assert result.stats["lines"] > 1_500_000
    _no_internal_errors(result)
    # Bad input in a wheel is rare: every file parses or is one clear error entry.
    assert len(result.errors) < 20, result.errors[:20]
    for f in result.findings:
        assert f.line >= 1 and f.column >= 1 and f.evidence


def test_unreachable_registry_skips_with_the_reason(tmp_path, monkeypatch):
    """No registry at all: the download step skips (never fails) and says why."""
    monkeypatch.setenv("ATTN_LINT_TEST_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(tmp_path))
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    with pytest.raises(pytest.skip.Exception) as info:
        sglang_tree("0.5.13")
    assert "sglang==0.5.13" in str(info.value)


def test_unpacked_trees_are_reused(tmp_path, monkeypatch):
    """A cache folder holding the wheel is unpacked once and then reused without pip."""
    monkeypatch.setenv("ATTN_LINT_TEST_CACHE", str(tmp_path))
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    with zipfile.ZipFile(wheels / "sglang-9.9.9-py3-none-any.whl", "w") as zf:
        zf.writestr("sglang/__init__.py", "")
        zf.writestr("sglang/srt/x.py", "X = 1\n")
        zf.writestr("sglang-9.9.9.dist-info/METADATA", "Name: sglang\n")
    tree = sglang_tree("9.9.9")
    assert (tree / "sglang" / "srt" / "x.py").read_text() == "X = 1\n"
    assert not (tree / "sglang-9.9.9.dist-info").exists()
    (wheels / "sglang-9.9.9-py3-none-any.whl").unlink()
    assert sglang_tree("9.9.9") == tree


def test_server_matches_one_shot_runs_on_real_code_through_edits(tmp_path):
    """The resident server against in-process runs on sglang's attention backends, through edits
    that add a wrapper, a probe site and a bad delegation call, and a deleted file."""
    import json

    from attn_lint.linter.app import server

    # The attention backends under their own package path, so that sglang's absolute imports resolve.
    tree = tmp_path / "sglang"
    attention = tree / "srt" / "layers" / "attention"
    shutil.copytree(sglang_tree("0.5.12.post1") / "sglang" / "srt" / "layers" / "attention", attention)
    (tree / "__init__.py").write_text("")
    cache = tmp_path / "cache"
    env = {k: v for k, v in os.environ.items() if k != "CI"}

    def findings(*flags):
        proc = subprocess.run([sys.executable, "-m", "attn_lint", *flags, "--format", "json", "--cache-dir",
                               str(cache), str(tree)], capture_output=True, text=True, env=env, timeout=300)
        doc = json.loads(proc.stdout)
        assert (doc["stats"].get("server") is True) == (flags == ("--server",)), proc.stderr
        return doc["findings"]

    base = attention / "base_attn_backend.py"
    edits = [
        (base, "\n\nclass _Wrap(AttentionBackend):\n    def __init__(self, inner: AttentionBackend):\n"
               "        self.inner = inner\n\n    def forward(self, *args, **kwargs):\n"
               "        return self.inner.forward(*args, **kwargs)\n"),
        (base, "\n\ndef _probe(backend: AttentionBackend, batch):\n"
               "    if hasattr(backend, 'init_mha_chunk_metadata'):\n        backend.init_mha_chunk_metadata(batch)\n"),
        (base, "\n\ndef _call(backend: AttentionBackend):\n"
               "    init = getattr(backend, 'init_mha_chunk_metadata', None)\n    if init:\n        init(1, 2, 3, 4)\n"),
    ]
    try:
        counts = [len(findings("--server"))]
        assert findings("--server") == findings("--no-server")
        for path, text in edits:
            with open(path, "a") as fh:
                fh.write(text)
            served = findings("--server")
            assert served == findings("--no-server")
            counts.append(len(served))
        victim = attention / "flashinfer_mla_backend.py"  # one of the hook's owners
        victim.unlink()
        assert findings("--server") == findings("--no-server")
        assert len(set(counts)) > 1  # the edits changed what is found: the comparison saw real changes
    finally:
        server.stop_all(str(cache))
