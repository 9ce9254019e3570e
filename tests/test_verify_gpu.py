"""`attn-lint --verify-on-gpu` end to end on an H200 (skipped elsewhere, with the reason).

Each test runs the real CLI in a fresh process: the verification forks children that use CUDA,
and a parent that has initialised CUDA itself (as test_gpu_smoke.py's harness does) could not.
Trees: tests/data/flashinfer_tree (a hook that plans a real FlashInfer prefill wrapper and one
that plans nothing), and the SGLang releases of the seed where the test cache holds them
(~/.cache/attn-lint-tests/sglang-VERSION/sglang/srt; bench/gpu_verify.sh unpacks them there).
The log of a run is kept in docs/verification-log/.
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import pytest
from conftest import REPO

pytestmark = pytest.mark.gpu

FI_TREE = REPO / "tests" / "data" / "flashinfer_tree" / "fitree"
CACHE = pathlib.Path(os.path.expanduser("~/.cache/attn-lint-tests"))
HOOK = "init_mha_chunk_metadata"


def _env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH", "")) if p)
    env.setdefault("FLASHINFER_CUDA_ARCH_LIST", "9.0")
    return env


@pytest.fixture(scope="module")
def gpu():
    """Skip with the reason unless this machine has a CUDA GPU, CUDA torch and flashinfer (asked in
    a child, so that this process never initialises CUDA)."""
    probe = ("from attn_lint.runtime_check.flashinfer_smoke import gpu_environment_problem as p; "
             "print(p() or '')")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=_env(), timeout=300)
    problem = out.stdout.strip() or (out.stderr.strip().splitlines() or [""])[-1]
    if problem:
        pytest.skip(problem)


def verify_on_gpu(path: pathlib.Path, name: str) -> dict:
    """The JSON report of `attn-lint --no-cache --verify-on-gpu --show-latent --format json PATH`:
    the one bench/gpu_verify.sh wrote under $ATTN_LINT_GPU_REPORTS (NAME.json), or a fresh run."""
    saved = pathlib.Path(os.environ.get("ATTN_LINT_GPU_REPORTS", "/nonexistent")) / f"{name}.json"
    if saved.is_file() and saved.stat().st_size:
        doc = json.loads(saved.read_text())
        _print(doc)
        return doc
    proc = subprocess.run([sys.executable, "-m", "attn_lint", "--no-cache", "--verify-on-gpu", "--show-latent",
                           "--format", "json", str(path)], capture_output=True, text=True, env=_env(), timeout=1200)
    assert proc.returncode in (0, 1), proc.stderr[-3000:]
    doc = json.loads(proc.stdout)
    _print(doc)
    return doc


def _print(doc: dict) -> None:
    for f in doc["findings"]:
        v = f["verification"]
        g = v.get("gpu")
        print(f"{f['code']} {f['class'].rsplit('.', 1)[-1]}.{f['member']}: {v['verdict']} | gpu: "
              f"{g if isinstance(g, str) else json.dumps({k: g.get(k) for k in ('verdict', 'detail', 'backend_hook')})}")
    for c in doc["stats"].get("gpu_controls", []):
        print(f"control {c['wrapper'].rsplit('.', 1)[-1]}.{c['member']} <- {c['signature']}: {c['verdict']} {c['detail']}")


def by_key(doc) -> dict:
    return {(f["code"], f["class"].rsplit(".", 1)[-1], f["member"]): f["verification"] for f in doc["findings"]}


def test_flashinfer_tree_real_hook_real_flashinfer(gpu):
    doc = verify_on_gpu(FI_TREE, "flashinfer_tree")
    by = by_key(doc)
    mla = by[("AL001", "HybridBackend", HOOK)]
    assert mla["gpu"]["backend_hook"] == f"the real FlashInferMLABackend.{HOOK}", mla["gpu"]
    assert mla["gpu"]["verdict"] == "qo-indptr-mismatch", mla["gpu"]
    assert "does not match qo_indptr[-1] (800)" in mla["gpu"]["detail"], mla["gpu"]
    assert mla["verdict"] == "consequence-reproduced"
    npu = by[("AL001", "HybridBackend", "prepare_cp_metadata")]
    assert npu["gpu"].startswith("n/a: the hook does not plan FlashInfer"), npu["gpu"]
    trt = by[("AL002", "ForwardingHybrid", HOOK)]
    assert trt["gpu"]["verdict"] == "type-error", trt["gpu"]
    assert f"TrtllmMLABackend.{HOOK}() takes 2 positional arguments but 3 were given" in trt["gpu"]["detail"]
    assert trt["gpu"]["backend_hook"] == f"the real TrtllmMLABackend.{HOOK}", trt["gpu"]
    controls = [c for c in doc["stats"]["gpu_controls"] if c["wrapper"].endswith(".OneArgHybrid")]
    assert controls and all(c["verdict"] == "pass" for c in controls), controls


def _srt(version: str) -> pathlib.Path:
    path = CACHE / f"sglang-{version}" / "sglang" / "srt"
    if not path.is_dir():
        pytest.skip(f"sglang {version} is not unpacked in {CACHE} (bench/gpu_verify.sh unpacks it)")
    return path


def test_sglang_0_5_12_post1_seed_al001_gives_flashinfers_error_through_the_real_wrapper(gpu):
    doc = verify_on_gpu(_srt("0.5.12.post1"), "sglang-0.5.12.post1")
    v = by_key(doc)[("AL001", "HybridLinearAttnBackend", HOOK)]
    assert v["gpu"]["front"] == "real HybridLinearAttnBackend", v["gpu"]
    assert v["gpu"]["verdict"] == "qo-indptr-mismatch", v["gpu"]
    assert "does not match qo_indptr[-1] (800)" in v["gpu"]["detail"], v["gpu"]
    assert v["gpu"]["backend_hook"] == f"the real FlashInferMLAAttnBackend.{HOOK}", v["gpu"]
    # No GPU verdict for a hook that plans no FlashInfer.
    for key, ver in by_key(doc).items():
        gpu_result = ver.get("gpu")
        if isinstance(gpu_result, dict):
            assert key[2] == HOOK, (key, gpu_result)


def test_sglang_0_5_13_seed_al002_real_typeerror(gpu):
    doc = verify_on_gpu(_srt("0.5.13"), "sglang-0.5.13")
    v = by_key(doc)[("AL002", "HybridLinearAttnBackend", HOOK)]
    assert v["gpu"]["verdict"] == "type-error", v["gpu"]
    assert f"TRTLLMMLABackend.{HOOK}() takes 2 positional arguments but 3 were given" in v["gpu"]["detail"]
    assert v["facts"]["error"].endswith(f"TRTLLMMLABackend.{HOOK}() takes 2 positional arguments but 3 were given")


def test_sglang_0_5_23_no_flashinfer_claim_for_hooks_that_plan_none_and_fixed_wrappers_pass(gpu):
    doc = verify_on_gpu(_srt("0.5.23"), "sglang-0.5.23")
    for f in doc["findings"]:
        gpu_result = f["verification"].get("gpu")
        assert isinstance(gpu_result, str) and gpu_result.startswith("n/a"), (f["class"], f["member"], gpu_result)
    controls = [c for c in doc["stats"]["gpu_controls"]
                if c["wrapper"].endswith(".HybridLinearAttnBackend") and c["member"] == HOOK]
    assert controls and all(c["verdict"] == "pass" for c in controls), doc["stats"]["gpu_controls"]
