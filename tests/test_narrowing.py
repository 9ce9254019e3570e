"""Delegates hold what every construction passes, not every subclass of their annotation."""

from conftest import lint, pairs, write_tree

BACKENDS = '''
class Backend:
    def forward(self, batch):
        raise NotImplementedError

    def after_load(self):
        pass


class Plain(Backend):
    def forward(self, batch):
        return batch


class Quantised(Backend):
    def forward(self, batch):
        return batch

    def after_load(self):
        self.ready = True

    def plan_chunks(self, batch):
        self.planned = batch


class Fallback(Backend):
    """Holds two backends and forwards to one of them."""

    def __init__(self, primary: Backend, fallback: Backend):
        self.primary = primary
        self.fallback = fallback

    def forward(self, batch):
        return self.primary.forward(batch) if batch else self.fallback.forward(batch)
'''

USES = '''
from serving.backends import Backend


def load(backend: Backend):
    backend.after_load()


def prefill(backend: Backend, batch):
    if hasattr(backend, "plan_chunks"):
        backend.plan_chunks(batch)
'''


def _tree(tmp_path, constructions: str):
    return write_tree(tmp_path, {
        "serving/__init__.py": "",
        "serving/backends.py": BACKENDS + constructions,
        "serving/uses.py": USES,
    })


def _lint(root):
    return lint(root, select=("AL001", "AL003"))  # the rules a delegate's narrowing decides


def test_annotation_alone_admits_every_backend(tmp_path):
    result = _lint(_tree(tmp_path, ""))
    assert pairs(result.findings) == [("Fallback", "after_load"), ("Fallback", "plan_chunks")]


def test_every_construction_passes_plain_backends(tmp_path):
    result = _lint(_tree(tmp_path, '''

def build():
    return Fallback(Plain(), Plain())
'''))
    assert pairs(result.findings) == []


def test_super_init_of_a_subclass_counts_as_a_construction(tmp_path):
    result = _lint(_tree(tmp_path, '''

class PlainOrPlain(Fallback):
    def __init__(self):
        super().__init__(primary=Plain(), fallback=Plain())
'''))
    assert pairs(result.findings) == []


def test_one_construction_with_the_hook_keeps_the_finding(tmp_path):
    result = _lint(_tree(tmp_path, '''

class QuantisedOrPlain(Fallback):
    def __init__(self):
        super().__init__(primary=Quantised(), fallback=Plain())
'''))
    assert pairs(result.findings) == [("Fallback", "after_load"), ("Fallback", "plan_chunks")]
    evidence = " ".join(e.note for f in result.findings for e in f.evidence)
    assert "super().__init__(...)" in evidence and "`self.primary` holds exactly Quantised" in evidence


def test_typing_cast_types_the_receiver_in_both_spellings(tmp_path):
    from conftest import lint, pairs, write_tree
    backends = '''
class Backend:
    def forward(self, batch):
        raise NotImplementedError


class FlashBackend(Backend):
    def plan_chunks(self, batch):
        self.planned = batch


class HybridBackend(Backend):
    def __init__(self, full_attn_backend: FlashBackend):
        self.full_attn_backend = full_attn_backend

    def forward(self, batch):
        return self.full_attn_backend.forward(batch)
'''
    for spelling, imports in (("cast", "from typing import cast"), ("typing.cast", "import typing")):
        root = write_tree(tmp_path / spelling, {
            "serving/__init__.py": "", "serving/backends.py": backends,
            "serving/model.py": f"{imports}\nfrom serving import backends\n\n\ndef prefill(obj, batch):\n"
                                f"    backend = {spelling}(backends.Backend, obj)\n"
                                f"    if hasattr(backend, 'plan_chunks'):\n        backend.plan_chunks(batch)\n"})
        assert pairs(lint(root).findings, "AL001") == [("HybridBackend", "plan_chunks")], spelling
