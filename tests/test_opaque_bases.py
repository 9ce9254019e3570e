"""A wrapper with a base outside the tree is not reported by AL001 or AL003: the members that base
gives it cannot be seen (the README's promise; `index.opaque_bases`)."""

from __future__ import annotations

from conftest import lint, pairs, write_tree
from test_wrapper_hierarchy import BACKENDS

# Backend (with the no-op `on_warmup`), FlashBackend implementing `plan_chunks` and `on_warmup`,
# and HybridBackend holding one: the wrapper of tests/test_wrapper_hierarchy.py, built by `build()`.
assert "\n\nclass OtherBackend" in BACKENDS  # what the split below cuts off
_BACKENDS = BACKENDS.split("\n\nclass OtherBackend")[0] + '''


class HybridBackend({bases}):
    def __init__(self, full_attn_backend: Backend):
        self.full_attn_backend = full_attn_backend

    def forward(self, batch):
        return self.full_attn_backend.forward(batch)
'''

_MODEL = '''
from serving.backends import Backend, FlashBackend, HybridBackend

def build():
    return HybridBackend(FlashBackend())

def prefill(backend: Backend, batch):
    if hasattr(backend, "plan_chunks"):
        backend.plan_chunks(batch)
    backend.on_warmup()
    return backend.forward(batch)
'''


def _tree(tmp_path, bases: str, imports: str = ""):
    return write_tree(tmp_path, {"serving/__init__.py": "",
                                 "serving/backends.py": imports + "\n" + _BACKENDS.replace("{bases}", bases),
                                 "serving/model.py": _MODEL})


def test_the_wrapper_with_in_tree_bases_is_reported(tmp_path):
    root = _tree(tmp_path, "Backend")
    assert pairs(lint(root, select=("AL001",)).findings) == [("HybridBackend", "plan_chunks")]
    assert pairs(lint(root, select=("AL003",)).findings) == [("HybridBackend", "on_warmup")]


def test_a_base_outside_the_tree_silences_both_rules(tmp_path):
    """The outside base comes first in Python's MRO: it may define `plan_chunks` and `on_warmup`."""
    root = _tree(tmp_path, "PlanningMixin, Backend", "from vendor_lib import PlanningMixin")
    assert lint(root, select=("AL001",)).findings == []
    assert lint(root, select=("AL003",)).findings == []


def test_an_outside_base_after_the_in_tree_definition_cannot_answer_for_it(tmp_path):
    """`class HybridBackend(Backend, PlanningMixin)`: `Backend.on_warmup` comes before anything the
    outside mixin holds, so the wrapper runs the no-op (AL003); `plan_chunks`, which no in-tree
    class of its MRO defines, the mixin may provide (AL001 stays silent)."""
    root = _tree(tmp_path, "Backend, PlanningMixin", "from vendor_lib import PlanningMixin")
    assert lint(root, select=("AL001",)).findings == []
    assert pairs(lint(root, select=("AL003",)).findings) == [("HybridBackend", "on_warmup")]


def test_inert_external_bases_do_not(tmp_path):
    root = _tree(tmp_path, "Backend, ABC", "from abc import ABC")
    assert pairs(lint(root, select=("AL001",)).findings) == [("HybridBackend", "plan_chunks")]
