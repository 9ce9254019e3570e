"""real_hook.py on the CPU: the owner's real class is built with a model-runner stand-in that
answers the harness's shape, launch state is given a stand-in only where a constructor stopped on
it, the FlashInfer wrapper it holds is swapped for the harness's, and its real hook runs (Python's
own TypeError when a call cannot bind). The GPU run of the same is in test_gpu_smoke.py."""

from __future__ import annotations

import types

import pytest
from conftest import write_tree

from attn_lint.linter.app.engine import Settings, analyse
from attn_lint.runtime_check.loader import TreeLoader
from attn_lint.runtime_check.real_hook import RealHookUnavailable, real_backend

TREE = {
    "rhpkg/__init__.py": "",
    "rhpkg/state.py": '''
_groups = None

def tp_size():
    assert _groups is not None, "parallel groups are not initialised"
    return _groups.world_size
''',
    "rhpkg/backend.py": '''
from .state import tp_size

class Ragged:
    """Plays the FlashInfer prefill wrapper: records its plans."""
    def __init__(self, workspace=None):
        self.plans = []

    def plan(self, qo_indptr, kv_indptr, heads, kv_heads, head_dim_qk, head_dim_vo=None, q_data_type=None):
        self.plans.append((list(qo_indptr), heads, head_dim_qk, head_dim_vo, q_data_type))

class Helper:
    def __init__(self, model_runner, backend):
        cfg = model_runner.model_config
        self.heads = cfg.num_attention_heads // tp_size()
        self.dim_qk = cfg.qk_nope_head_dim + cfg.qk_rope_head_dim
        self.dim_vo = cfg.v_head_dim
        self.dtype = model_runner.dtype
        self.ragged = backend.ragged

    def update(self, fb):
        lens = fb.extend_seq_lens_cpu
        indptr = [0]
        for n in lens:
            indptr.append(indptr[-1] + n)
        self.ragged.plan(indptr, indptr, self.heads, self.heads, self.dim_qk, head_dim_vo=self.dim_vo,
                         q_data_type=self.dtype)

class Owner:
    def __init__(self, model_runner):
        self.ragged = Ragged(model_runner.device)
        self.helper = Helper(model_runner, self)

    def hook(self, fb):
        self.helper.update(fb)

class NeedsMore:
    def __init__(self, model_runner):
        raise RuntimeError("needs a real checkpoint")
''',
}


@pytest.fixture
def loaded(tmp_path):
    root = write_tree(tmp_path, TREE)
    result = analyse([str(root / "rhpkg")], Settings(cache_dir=None, jobs=1), keep_context=True)
    with TreeLoader(result.files) as loader:
        mod = loader.load("rhpkg.backend").module
        harness = types.SimpleNamespace(wrapper=mod.Ragged(), dtype="bf16", num_qo_heads=16, head_dim_qk=192,
                                        head_dim_vo=128, planned_seq_lens=None)
        yield mod, harness, loader


def test_the_real_hook_plans_the_harness_wrapper_with_the_harness_shape(loaded):
    mod, harness, loader = loaded
    backend, setup = real_backend(mod.Owner, "hook", harness, loader)
    assert setup["launch_state_stand_ins"] == ["_groups"]
    assert sorted(setup["wired"]) == ["self.helper.ragged", "self.ragged"]
    assert mod.__dict__["tp_size"].__globals__["_groups"] is None  # put back
    backend.hook(types.SimpleNamespace(extend_seq_lens_cpu=[5, 37, 130]))
    assert harness.wrapper.plans == [([0, 5, 42, 172], 16, 192, 128, "bf16")]
    assert backend.hook_calls == 1 and harness.planned_seq_lens == (5, 37, 130)


def test_a_call_the_real_hook_cannot_bind_raises_pythons_own_typeerror(loaded):
    mod, harness, loader = loaded
    backend, _ = real_backend(mod.Owner, "hook", harness, loader)
    with pytest.raises(TypeError, match=r"Owner.hook\(\) takes 2 positional arguments but 3 were given"):
        backend.hook(types.SimpleNamespace(extend_seq_lens_cpu=[1]), False)
    assert backend.hook_calls == 0 and harness.wrapper.plans == []


def test_a_class_that_needs_more_than_the_runner_shape_is_unavailable(loaded):
    mod, harness, loader = loaded
    with pytest.raises(RealHookUnavailable, match="needs a real checkpoint"):
        real_backend(mod.NeedsMore, "hook", harness, loader)
