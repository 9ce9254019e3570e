"""A capability gate on the very object rules a wrapper out.

`if backend.supports_chunks(): ... hasattr(backend, "plan_chunks")`: where the wrapper's own
answer is a false constant (inherited `return False`, a false class attribute), the caller never
reaches the probe with the wrapper, so AL001's claim about it there is latent (`receiver-gate`).
A wrapper that answers for its delegate (`return self.full.supports_chunks()`), a test of another
object, or a test that does not dominate the probe leaves the finding in the default report.
"""

from __future__ import annotations

import pytest
from conftest import lint, write_tree
from rename_tree import rename_tree

_BACKENDS = """
class Backend:
    use_chunks = False

    def forward(self, batch):
        raise NotImplementedError

    def supports_chunks(self):
        \"\"\"Whether plan_chunks should run.\"\"\"
        return False

    def init_chunks(self, batch):
        pass


class FlashBackend(Backend):
    use_chunks = True

    def forward(self, batch):
        return batch

    def supports_chunks(self):
        return True

    def plan_chunks(self, batch):
        self.planned = batch

    def init_chunks(self, batch):
        self.chunks = [batch]


class HybridBackend(Backend):
    def __init__(self, full: Backend):
        self.full = full

    def forward(self, batch):
        return self.full.forward(batch)
{extra}

def get_backend() -> Backend:
    return CURRENT[0]


CURRENT = []
"""

_MODEL = """
from serving.backends import Backend, get_backend


def prefill(backend: Backend, other: Backend, batch):
{body}
    return backend.forward(batch)
"""

_PROBE = """        if hasattr(backend, "plan_chunks"):
            backend.plan_chunks(batch)"""
_PROBE_TOP = """    if hasattr(backend, "plan_chunks"):
        backend.plan_chunks(batch)"""


def _tree(tmp_path, body: str, extra: str = ""):
    return write_tree(tmp_path, {"serving/__init__.py": "",
                                 "serving/backends.py": _BACKENDS.format(extra=extra),
                                 "serving/model.py": _MODEL.format(body=body)})


def _al001(root) -> tuple[list, list]:
    result = lint(root, astroid=False)
    assert result.errors == []
    found = [(f.class_name.rsplit(".", 1)[-1], f.member, f.confidence) for f in result.findings if f.code == "AL001"]
    return sorted(x[:2] for x in found if x[2] != "low"), sorted(x[:2] for x in found if x[2] == "low")


GATED = {
    "method": "    if backend.supports_chunks():\n" + _PROBE,
    "flag": "    if backend.use_chunks:\n" + _PROBE,
    "early-return": "    if not backend.supports_chunks():\n        return None\n" + _PROBE_TOP,
    "accessor": "    if get_backend().supports_chunks():\n" + _PROBE.replace("backend,", "get_backend(),")
                                                                  .replace("backend.plan", "get_backend().plan"),
}


@pytest.mark.parametrize("gate", sorted(GATED))
def test_a_gate_the_wrapper_answers_false_keeps_it_from_the_probe(tmp_path, gate):
    """INVALID before: HybridBackend 'hid' plan_chunks at a probe it never reaches."""
    assert _al001(_tree(tmp_path, GATED[gate])) == ([], [("HybridBackend", "plan_chunks")])


def test_a_wrapper_answering_for_its_delegate_is_still_reported(tmp_path):
    extra = "\n    def supports_chunks(self):\n        return self.full.supports_chunks()\n"
    assert _al001(_tree(tmp_path, GATED["method"], extra)) == ([("HybridBackend", "plan_chunks")], [])


@pytest.mark.parametrize("body", [
    "    if other.supports_chunks():\n" + _PROBE,                         # another object's answer
    "    if backend.supports_chunks():\n        pass\n" + _PROBE_TOP,  # not over the probe
])
def test_a_gate_that_does_not_decide_the_probe_leaves_it(tmp_path, body):
    assert _al001(_tree(tmp_path, body)) == ([("HybridBackend", "plan_chunks")], [])


def test_the_same_with_every_name_changed(tmp_path):
    src = _tree(tmp_path / "src", GATED["method"])
    rename_tree(src, tmp_path / "renamed")
    shown, latent = _al001(tmp_path / "renamed")
    assert shown == [] and len(latent) == 1


@pytest.mark.parametrize("gate,shown", [("backend.supports_chunks()", False), ("other.supports_chunks()", True)])
def test_a_gated_call_of_a_no_op_default(tmp_path, gate, shown):
    """AL003: the wrapper inherits the no-op `init_chunks`; the call runs only where the same
    object said it supports chunks, which the wrapper never does."""
    root = _tree(tmp_path, f"    if {gate}:\n        backend.init_chunks(batch)")
    result = lint(root, astroid=False)
    found = [(f.member, f.confidence != "low") for f in result.findings
             if f.code == "AL003" and f.member == "init_chunks"]
    assert found == [("init_chunks", shown)]
