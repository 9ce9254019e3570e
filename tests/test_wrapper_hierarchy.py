"""Wrappers that subclass other wrappers: a gap is reported once, on the wrapper it comes from, and
a subclass's own gap is reported even when its wrapper base has none for that hook."""

from __future__ import annotations

from conftest import lint, pairs, write_tree

BACKENDS = '''
class Backend:
    def forward(self, batch):
        raise NotImplementedError

    def on_warmup(self):
        pass


class FlashBackend(Backend):
    def forward(self, batch):
        return batch

    def plan_chunks(self, batch):
        self.planned = batch

    def on_warmup(self):
        self.warm = True


class OtherBackend(Backend):
    def forward(self, batch):
        return batch


class BaseWrapper(Backend):
    def __init__(self, inner: {inner}):
        self.inner = inner

    def forward(self, batch):
        return self.inner.forward(batch)


class HybridBackend(BaseWrapper):
    def __init__(self, inner: {inner}, full_attn_backend: FlashBackend):
        super().__init__(inner)
        self.full_attn_backend = full_attn_backend

    def forward(self, batch):
        return self.full_attn_backend.forward(batch)
'''

MODEL = '''
from serving.backends import Backend


def prefill(backend: Backend, batch):
    if hasattr(backend, "plan_chunks"):
        backend.plan_chunks(batch)
    backend.on_warmup()
    return backend.forward(batch)
'''


def _tree(tmp_path, inner: str):
    return write_tree(tmp_path, {"serving/__init__.py": "", "serving/backends.py": BACKENDS.format(inner=inner),
                                 "serving/model.py": MODEL})


def test_a_subclass_gap_its_wrapper_base_does_not_have_is_reported(tmp_path):
    # BaseWrapper holds an OtherBackend, which has neither hook: nothing to hide there. HybridBackend
    # also holds a FlashBackend, which has both, and forwards neither.
    result = lint(_tree(tmp_path, "OtherBackend"))
    assert pairs(result.findings, "AL001") == [("HybridBackend", "plan_chunks")]
    assert pairs(result.findings, "AL003") == [("HybridBackend", "on_warmup")]


def test_a_gap_inherited_from_a_wrapper_base_is_reported_once_on_the_base(tmp_path):
    result = lint(_tree(tmp_path, "Backend"))  # now BaseWrapper's delegates include FlashBackend too
    assert pairs(result.findings, "AL001") == [("BaseWrapper", "plan_chunks")]
    assert pairs(result.findings, "AL003") == [("BaseWrapper", "on_warmup")]
