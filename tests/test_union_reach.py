"""A site's reach is what its callers pass, not its whole union annotation.

`def prepare(backend: FlashBackend | HybridBackend, batch)` probing `plan_chunks` was taken to
meet a `HybridBackend`, while every call in the tree hands it a `FlashBackend` and a twin helper
serves the wrapper. A parameter annotated with a union, of a function whose calls the tree all
shows (module-level functions by name or through their module, methods through their receivers),
is what those calls pass; where a call cannot be read (the function handed on as a value, a
`*args`, a call from module level, too many callers) the annotation still answers.
"""

from __future__ import annotations

import pytest
from conftest import lint, write_tree
from rename_tree import rename_tree

_BACKENDS = """
class Backend:
    def forward(self, batch):
        raise NotImplementedError


class FlashBackend(Backend):
    def forward(self, batch):
        return batch

    def plan_chunks(self, batch):
        self.planned = batch


class TritonBackend(Backend):
    def forward(self, batch):
        return batch


class HybridBackend(Backend):
    def __init__(self, full: Backend):
        self.full = full

    def forward(self, batch):
        return self.full.forward(batch)
"""

_HELPERS = """
from serving.backends import FlashBackend, HybridBackend


def prepare(backend: FlashBackend | HybridBackend, batch):
    if hasattr(backend, "plan_chunks"):
        backend.plan_chunks(batch)
    return backend.forward(batch)


def prepare_hybrid(backend: HybridBackend, batch):
    return backend.forward(batch)
"""


def _runner(calls: str) -> str:
    imported = "" if "helpers.prepare" in calls else "prepare, "
    return f"""
from serving import helpers
from serving.backends import FlashBackend, HybridBackend, TritonBackend
from serving.helpers import {imported}prepare_hybrid


def run_leaf(batch):
    return {calls}


def run_hybrid(batch):
    return prepare_hybrid(HybridBackend(FlashBackend()), batch)
"""


def _tree(tmp_path, calls: str, extra: str = ""):
    return write_tree(tmp_path, {"serving/__init__.py": "", "serving/backends.py": _BACKENDS,
                                 "serving/helpers.py": _HELPERS + extra, "serving/runner.py": _runner(calls)})


def _al001(root) -> list[tuple[str, str]]:
    result = lint(root, astroid=False)
    assert result.errors == []
    return sorted((f.class_name.rsplit(".", 1)[-1], f.member) for f in result.findings if f.code == "AL001")


@pytest.mark.parametrize("calls", ["prepare(FlashBackend(), batch)", "helpers.prepare(FlashBackend(), batch)",
                                   "prepare(backend=FlashBackend(), batch=batch)"])
def test_a_union_helper_its_callers_give_one_kind_never_meets_the_other(tmp_path, calls):
    """INVALID before: the probe in `prepare` was taken to meet HybridBackend."""
    assert _al001(_tree(tmp_path, calls)) == []


@pytest.mark.parametrize("calls", ["prepare(HybridBackend(TritonBackend()), batch)",
                                   "prepare(FlashBackend(), batch) or prepare(HybridBackend(FlashBackend()), batch)"])
def test_a_caller_passing_the_wrapper_is_still_reported(tmp_path, calls):
    assert _al001(_tree(tmp_path, calls)) == [("HybridBackend", "plan_chunks")]


@pytest.mark.parametrize("extra", ["\n\nHANDLERS = {'leaf': prepare}\n",            # handed on as a value
                                   "\n\nprepare(FlashBackend(), None)\n",            # a call from module level
                                   "\n\ndef spread(args):\n    return prepare(*args)\n"])  # *args
def test_where_some_call_cannot_be_read_the_annotation_answers(tmp_path, extra):
    assert _al001(_tree(tmp_path, "prepare(FlashBackend(), batch)", extra)) == [("HybridBackend", "plan_chunks")]


def test_the_same_with_every_name_changed(tmp_path):
    src = _tree(tmp_path / "src", "prepare(FlashBackend(), batch)")
    rename_tree(src, tmp_path / "renamed")
    assert _al001(tmp_path / "renamed") == []
    src = _tree(tmp_path / "src2", "prepare(HybridBackend(TritonBackend()), batch)")
    rename_tree(src, tmp_path / "renamed2")
    assert len(_al001(tmp_path / "renamed2")) == 1
