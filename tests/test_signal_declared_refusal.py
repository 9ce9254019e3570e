"""declared-refusal: a wrapper's own `raise NotImplementedError` override is reported by AL003 (a
placeholder replacing a placeholder fixes nothing) but as latent drift: its author declared it.
An inherited placeholder, and every other rule's pairings, are left alone."""

from __future__ import annotations

from conftest import lint, write_tree

_TREE = '''
class Backend:
    def forward(self, batch):
        raise NotImplementedError

    def refresh(self, spec):
        raise NotImplementedError()


class FastBackend(Backend):
    def forward(self, batch):
        return batch

    def refresh(self, spec):
        self.spec = spec


class SplitBackend(Backend):
    def __init__(self, inner: Backend):
        self.inner = inner

    def forward(self, batch):
        return self.inner.forward(batch)
{own}

def verify(backend: Backend, spec):
    backend.refresh(spec)
'''


def _al003(tmp_path, own: str = "", extra: str = ""):
    root = write_tree(tmp_path, {"pkg/__init__.py": "", "pkg/backends.py": _TREE.replace("{own}", own) + extra})
    return [f for f in lint(root).findings if f.code == "AL003"]


def test_an_inherited_placeholder_is_not_a_declared_refusal(tmp_path):
    (f,) = _al003(tmp_path)
    assert f.confidence == "medium"
    assert not [r for r in f.confidence_reasons if r.signal == "declared-refusal"]


def test_the_wrappers_own_placeholder_is_latent_with_the_line_that_declares_it(tmp_path):
    own = '\n    def refresh(self, spec):\n        raise NotImplementedError("split backends cannot refresh")\n'
    (f,) = _al003(tmp_path, own)
    assert f.confidence == "low"
    (why,) = f.confidence_reasons
    assert why.signal == "declared-refusal" and why.effect == "lower"
    assert why.path == "pkg/backends.py" and why.line == 25  # the `def refresh` of SplitBackend
    assert "`SplitBackend.refresh` is the wrapper's own `raise NotImplementedError`" in why.note


def test_a_subclass_inheriting_the_wrappers_placeholder_is_reported_once_on_the_wrapper(tmp_path):
    own = '\n    def refresh(self, spec):\n        raise NotImplementedError\n'
    extra = '''

class TracedSplitBackend(SplitBackend):
    def forward(self, batch):
        return self.inner.forward(batch)
'''
    (f,) = _al003(tmp_path, own, extra)
    assert f.class_name == "pkg.backends.SplitBackend" and f.confidence == "low"


def test_a_real_override_is_no_finding(tmp_path):
    own = '\n    def refresh(self, spec):\n        self.inner.refresh(spec)\n'
    assert _al003(tmp_path, own) == []
