"""check-only: an implementation's hook that only refuses configurations loses no working behaviour
when a wrapper skips it; anything that acts keeps the finding."""

from __future__ import annotations

import ast

import pytest
from conftest import lint, write_tree

from attn_lint.linter.perfile.summary import is_checks_only_body

_TREE = '''
class Backend:
    def forward(self, batch):
        raise NotImplementedError

    def validate(self):
        return


class FlashBackend(Backend):
    def __init__(self, mla):
        self.mla = mla

    def forward(self, batch):
        return batch

    def validate(self):
{body}


class HybridBackend(Backend):
    def __init__(self, full: Backend):
        self.full = full

    def forward(self, batch):
        return self.full.forward(batch)


def check(backend: Backend):
    backend.validate()
'''


def _finding(tmp_path, body: str):
    src = _TREE.replace("{body}", "\n".join("        " + line for line in body.splitlines()))
    root = write_tree(tmp_path, {"pkg/__init__.py": "", "pkg/backends.py": src})
    (f,) = [f for f in lint(root).findings if f.code == "AL003"]
    return f


def test_a_hook_that_only_raises_is_latent(tmp_path):
    f = _finding(tmp_path, 'if self.mla:\n    raise ValueError("MLA needs version 3")')
    assert f.confidence == "low"
    (why,) = [r for r in f.confidence_reasons if r.signal == "check-only"]
    assert "FlashBackend.validate" in why.note and why.line == 17


@pytest.mark.parametrize("body", [
    'if self.mla:\n    raise ValueError("no")\nself.checked = True',      # also records something
    'if self.mla:\n    self.reset()\n    raise ValueError("no")',       # acts before refusing
    'if self.mla:\n    return 3',                                         # answers something
    'print("validating")',                                               # no refusal at all
])
def test_a_hook_that_acts_keeps_the_finding(tmp_path, body):
    assert _finding(tmp_path, body).confidence == "medium"


@pytest.mark.parametrize("src, expected", [
    ('"""doc"""\nif a:\n    raise X()', True),
    ("assert a, 'why'", True),
    ("if a:\n    pass\nelif b:\n    raise X()\nelse:\n    assert c", True),
    ("pass", False),
    ("if a:\n    pass", False),
    ("if a:\n    raise X()\nreturn None", False),
    ("x = 1\nif x:\n    raise X()", False),
    ("if f():\n    raise X()\nlog()", False),
])
def test_checks_only_bodies(src, expected):
    assert is_checks_only_body(ast.parse(src).body) is expected


def test_behind_a_placeholder_the_check_is_lost_and_the_finding_stays(tmp_path):
    """Over a `raise NotImplementedError` placeholder the wrapper raises for every configuration
    the implementation's check accepts: that is working behaviour lost, so check-only keeps out."""
    src = _TREE.replace("    def validate(self):\n        return\n",
                        "    def validate(self):\n        raise NotImplementedError()\n", 1)
    src = src.replace("{body}", '        if self.mla:\n            raise ValueError("MLA needs version 3")')
    root = write_tree(tmp_path, {"pkg/__init__.py": "", "pkg/backends.py": src})
    (f,) = [f for f in lint(root).findings if f.code == "AL003"]
    assert f.confidence == "medium"
    assert "raises NotImplementedError" in f.message
    assert not [r for r in f.confidence_reasons if r.signal == "check-only"]


def test_a_rejected_call_is_not_excused_by_a_check_only_body(tmp_path):
    """AL002 skips check-only (rules/al002 `skipped_signals`): the TypeError comes from binding
    the arguments, before the refusing body runs."""
    from small_trees import TREES

    backends = TREES["AL002"]["serving/backends.py"].replace(
        "        super().plan_chunks(batch, disable_ragged=True)",
        '        if batch is None:\n            raise ValueError("no batch")')
    root = write_tree(tmp_path, {"serving/__init__.py": "", "serving/backends.py": backends})
    (f,) = lint(root, select=("AL002",)).findings
    assert f.confidence == "medium"
    assert [r for r in f.confidence_reasons if r.signal == "check-only"] == []
