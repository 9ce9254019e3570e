"""Wrappers beyond their own family's structure.

* AL002: a wrapper's own override of the API it forwards to its delegates, narrower than that API
  (diffusers' combined pipelines: `enable_model_cpu_offload(self, gpu_id=0)` forwarding to their
  sub-pipelines while the base they share takes `(gpu_id=None, device="cuda")`): a call through the
  base's API raises TypeError on the wrapper alone. A rename in place, `**kwargs`, or an override that
  forwards nothing is not reported.
* AL003: a facade handing several of its own operations by name to an object of another family
  (lmdeploy's `UniExecutor` over its model agent) inherits its base's `raise NotImplementedError`
  for a member that object implements.
"""

from __future__ import annotations

import pytest
from conftest import lint, write_tree
from rename_tree import rename_tree

_PIPELINES = """
class Pipeline:
    def __call__(self, prompt):
        raise NotImplementedError

    def enable_offload(self, gpu_id=None, device="cuda"):
        self.offloaded = (gpu_id, device)


class PriorPipeline(Pipeline):
    def __call__(self, prompt):
        return prompt


class DecoderPipeline(Pipeline):
    def __call__(self, prompt):
        return prompt


class CombinedPipeline(Pipeline):
    def __init__(self, prior: PriorPipeline, decoder: DecoderPipeline):
        self.prior = prior
        self.decoder = decoder

    def __call__(self, prompt):
        return self.decoder(self.prior(prompt))

    def enable_offload({signature}):
        {body}
"""


def _pipelines(tmp_path, signature: str, body: str = "self.prior.enable_offload(gpu_id=gpu_id)\n"
                                                        "        self.decoder.enable_offload(gpu_id=gpu_id)"):
    return write_tree(tmp_path, {"pipes/__init__.py": "",
                                 "pipes/pipelines.py": _PIPELINES.format(signature=signature, body=body)})


def _found(root, code: str):
    result = lint(root, astroid=False)
    assert result.errors == []
    return sorted((f.class_name.rsplit(".", 1)[-1], f.member, f.confidence) for f in result.findings if f.code == code)


def test_a_forwarding_override_narrower_than_its_api_is_reported(tmp_path):
    """INVALID before: no call in the tree passes `device`, so AL002 saw nothing."""
    assert _found(_pipelines(tmp_path, "self, gpu_id=0"), "AL002") == [("CombinedPipeline", "enable_offload", "medium")]


@pytest.mark.parametrize("signature,body", [
    ("self, gpu_id=None, device='cuda'", None),   # the base's signature
    ("self, gpu_id=0, **kwargs", None),           # takes anything
    ("self, gpu=None, dev='cuda'", None),         # renamed in place: positional callers still bind
    ("self, gpu_id=0", "self.offloaded = gpu_id"),  # forwards nothing: its own business
])
def test_what_is_not_a_narrowed_forward(tmp_path, signature, body):
    root = _pipelines(tmp_path, signature, *(() if body is None else (body,)))
    assert _found(root, "AL002") == []


_EXECUTORS = """
class Executor:
    def build(self):
        raise NotImplementedError

    def sleep(self, level=1):
        raise NotImplementedError('Not Implemented.')


class ModelAgent:
    def build(self):
        self.built = True

    def warmup(self):
        self.warm = True

    def sleep(self, level=1):
        self.asleep = level


class RayExecutor(Executor):
    def build(self):
        return None

    def sleep(self, level=1):
        return level


class UniExecutor(Executor):
    def __init__(self):
        self.agent = ModelAgent()

    def build(self):
        self.agent.build()

    def warmup(self):
        self.agent.warmup()
{extra}
"""

_ENGINE = """
from engine.executors import Executor


class Engine:
    def __init__(self, executor: Executor):
        self.executor = executor

    def sleep(self, level):
        self.executor.sleep(level)
"""


def _executors(tmp_path, extra: str = ""):
    return write_tree(tmp_path, {"engine/__init__.py": "", "engine/executors.py": _EXECUTORS.format(extra=extra),
                                 "engine/engine.py": _ENGINE})


def test_a_facade_inheriting_a_placeholder_its_object_implements_is_reported(tmp_path):
    """INVALID before: UniExecutor holds an object of another family, so it was no wrapper."""
    assert _found(_executors(tmp_path), "AL003") == [("UniExecutor", "sleep", "medium")]


@pytest.mark.parametrize("extra", [
    "\n    def sleep(self, level=1):\n        self.agent.sleep(level)\n",   # forwards it
])
def test_a_facade_forwarding_the_member_is_not_reported(tmp_path, extra):
    assert _found(_executors(tmp_path, extra), "AL003") == []


def test_one_forwarded_operation_is_no_facade(tmp_path):
    root = _executors(tmp_path)
    path = root / "engine" / "executors.py"
    path.write_text(path.read_text().replace("    def warmup(self):\n        self.agent.warmup()\n", ""))
    assert _found(root, "AL003") == []


def test_the_same_with_every_name_changed(tmp_path):
    rename_tree(_pipelines(tmp_path / "p", "self, gpu_id=0"), tmp_path / "rp")
    assert len(_found(tmp_path / "rp", "AL002")) == 1
    rename_tree(_executors(tmp_path / "e"), tmp_path / "re")
    assert len(_found(tmp_path / "re", "AL003")) == 1


def test_an_async_placeholder_says_it_raises_only_once_awaited(tmp_path):
    root = _executors(tmp_path)
    path = root / "engine" / "executors.py"
    path.write_text(path.read_text().replace("    def sleep(self, level=1):\n        raise",
                                             "    async def sleep(self, level=1):\n        raise", 1))
    result = lint(root, astroid=False)
    (f,) = [f for f in result.findings if f.code == "AL003"]
    assert "once awaited" in f.message and "does nothing where it is not awaited" in f.message


_TOKENIZERS = """
class SentencePieceTokenizer:
    def __init__(self, path):
        self.path = path

    def encode(self, s, add_bos=True):
        return [s]

    def decode(self, ids):
        return str(ids)


class HuggingFaceTokenizer:
    def __init__(self, path):
        self.path = path

    def encode(self, s, add_bos=True, add_special_tokens=True):
        return [s]

    def decode(self, ids):
        return str(ids)


class Tokenizer:
    def __init__(self, path: str):
        if path.endswith(".model"):
            self.model = SentencePieceTokenizer(path)
        else:
            self.model = HuggingFaceTokenizer(path)

    def encode(self, s, add_bos=True, add_special_tokens=True):
        return self.model.encode(s, add_bos, {special})

    def decode(self, ids):
        return self.model.decode(ids)
"""


@pytest.mark.parametrize("special,found", [("add_special_tokens", True), ("", False)])
def test_a_facade_over_classes_it_builds_by_name_checks_each(tmp_path, special, found):
    """INVALID before: the tokenizers share no base, so there was no family and no wrapper; the
    call passes three positionals the sentencepiece tokenizer cannot take."""
    src = _TOKENIZERS.format(special=special).replace("add_bos, )", "add_bos)")
    root = write_tree(tmp_path, {"tok/__init__.py": "", "tok/tokenizer.py": src})
    got = [(f.member, tuple(t.rsplit(".", 1)[-1] for t in f.targets)) for f in lint(root, astroid=False).findings
           if f.code == "AL002"]
    assert got == ([("encode", ("SentencePieceTokenizer",))] if found else [])
