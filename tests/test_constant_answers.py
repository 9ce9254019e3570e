"""A wrapper answering a capability question with its base's constant.

`def supports_chunks(self): return False` on the family base and `return True` on an
implementation: both bodies are "no-ops" by shape, but they answer differently, so a wrapper that
inherits the base's answer tells callers "no" for a delegate that says "yes" (and the callers skip
what the delegate supports). AL003 reports it where the member is called on a receiver that can
be the wrapper; the same answer on both sides, or a wrapper answering for its delegate, is not.
"""

from __future__ import annotations

import pytest
from conftest import lint, write_tree
from rename_tree import rename_tree

_BACKENDS = """
class Backend:
    def forward(self, batch):
        raise NotImplementedError

    def supports_chunks(self):
        \"\"\"Whether this backend can plan chunked prefill.\"\"\"
        return False


class FlashBackend(Backend):
    def forward(self, batch):
        return batch

    def supports_chunks(self):
        return {flash_answer}


class TritonBackend(Backend):
    def forward(self, batch):
        return batch


class HybridBackend(Backend):
    def __init__(self, full: Backend):
        self.full = full

    def forward(self, batch):
        return self.full.forward(batch)
{extra}"""

_MODEL = """
from serving.backends import Backend


def prefill(backend: Backend, batch):
    if backend.supports_chunks():
        batch = batch[:8]
    return backend.forward(batch)
"""


def _tree(tmp_path, flash_answer: str = "True", extra: str = ""):
    return write_tree(tmp_path, {"serving/__init__.py": "",
                                 "serving/backends.py": _BACKENDS.format(flash_answer=flash_answer, extra=extra),
                                 "serving/model.py": _MODEL})


def _al003(root) -> list[tuple[str, str, str]]:
    result = lint(root, astroid=False)
    assert result.errors == []
    return sorted((f.class_name.rsplit(".", 1)[-1], f.member, dict(f.details).get("default", ""))
                  for f in result.findings if f.code == "AL003")


def test_a_wrapper_inheriting_the_bases_no_is_reported(tmp_path):
    """INVALID before: both bodies are `return <constant>`, so the override was no 'real body'."""
    assert _al003(_tree(tmp_path)) == [("HybridBackend", "supports_chunks", "constant")]


@pytest.mark.parametrize("flash_answer", ["False", "None", "0"])
def test_the_same_answer_or_another_false_one_is_nothing_lost(tmp_path, flash_answer):
    # `None` or `0` decide a test of the answer as `False` does.
    assert _al003(_tree(tmp_path, flash_answer)) == []


@pytest.mark.parametrize("answers", [("64", "128"), ("'fa2'", "'fa3'")])
def test_other_values_are_other_answers(tmp_path, answers):
    root = _tree(tmp_path, answers[1])
    path = root / "serving" / "backends.py"
    path.write_text(path.read_text().replace("        return False", f"        return {answers[0]}", 1))
    assert _al003(root) == [("HybridBackend", "supports_chunks", "constant")]


def test_a_wrapper_answering_for_its_delegate_is_not_reported(tmp_path):
    extra = "\n    def supports_chunks(self):\n        return self.full.supports_chunks()\n"
    assert _al003(_tree(tmp_path, extra=extra)) == []


def test_the_message_names_the_answer(tmp_path):
    result = lint(_tree(tmp_path), astroid=False)
    (f,) = [f for f in result.findings if f.code == "AL003"]
    assert "answers `False`" in f.message
    assert any("to answer `True`" in e.note for e in f.evidence)


def test_the_same_with_every_name_changed(tmp_path):
    rename_tree(_tree(tmp_path / "src"), tmp_path / "renamed")
    assert len(_al003(tmp_path / "renamed")) == 1
