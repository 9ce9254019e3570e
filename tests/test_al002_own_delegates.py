"""AL002 in a wrapper calling its own delegates: only what those delegates are built with can reject."""

from __future__ import annotations

from conftest import lint, write_tree

_TREE = '''
class Backend:
    def forward(self, batch):
        raise NotImplementedError


class FlashBackend(Backend):
    def forward(self, batch):
        return batch

    def plan(self, batch, layer_override=None):
        self.planned = (batch, layer_override)


class TrtBackend(Backend):
    def forward(self, batch):
        return batch

    def plan(self, batch):
        self.planned = batch


class SplitBackend(Backend):
    def __init__(self, prefill: Backend, decode: Backend):
        self.prefill = prefill
        self.decode = decode

    def forward(self, batch):
        return (self.prefill if batch else self.decode).forward(batch)

    def plan(self, batch, other: Backend, layer_override=None):
        backend = {choice}
        hook = getattr(backend, "plan", None)
        if hook is not None:
            hook(batch, layer_override=layer_override)


def build(fast: bool) -> Backend:
    return SplitBackend({prefill}, FlashBackend())
'''


def _al002(tmp_path, choice="self.prefill if batch else self.decode", prefill="FlashBackend()"):
    root = write_tree(tmp_path, {"pkg/__init__.py": "",
                                 "pkg/backends.py": _TREE.replace("{choice}", choice).replace("{prefill}", prefill)})
    return [f for f in lint(root).findings if f.code == "AL002" and f.member == "plan"]


def test_delegates_built_only_with_accepting_classes_give_no_finding(tmp_path):
    assert _al002(tmp_path) == []


def test_a_delegate_built_with_the_rejecting_class_is_reported(tmp_path):
    (f,) = _al002(tmp_path, prefill="TrtBackend() if fast else FlashBackend()")
    assert f.targets == ("pkg.backends.TrtBackend",)


def test_a_receiver_that_may_be_something_else_keeps_the_annotation(tmp_path):
    # `other` is any Backend: TrtBackend among them.
    (f,) = _al002(tmp_path, choice="self.prefill if batch else other")
    assert f.targets == ("pkg.backends.TrtBackend",)
