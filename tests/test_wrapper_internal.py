"""A wrapper's own code reaching its delegates is forwarding, not a probe of another wrapper: also
when it picks the delegate through a method of its own (`self._select(mode).hook(...)`)."""

from __future__ import annotations

from conftest import lint, pairs, write_tree

BACKENDS = '''
class Backend:
    def forward(self, batch):
        raise NotImplementedError

    def write_buffers(self, batch):
        return None


class FlashBackend(Backend):
    def forward(self, batch):
        return batch

    def write_buffers(self, batch):
        return [batch]


class SplitBackend(Backend):
    """Prefill/decode split: forwards through the delegate it selects."""

    def __init__(self, prefill: Backend, decode: Backend):
        self.prefill = prefill
        self.decode = decode

    def _select(self, mode):
        if mode:
            return self.prefill
        return self.decode

    def forward(self, batch):
        return self.prefill.forward(batch) if batch else self.decode.forward(batch)

    def write_buffers(self, batch):
        {use}


class ModelBackend(Backend):
    """Another wrapper: inherits the no-op `write_buffers`."""

    def __init__(self, full: Backend):
        self.full = full

    def forward(self, batch):
        return self.full.forward(batch)
'''


def _found(tmp_path, use: str):
    root = write_tree(tmp_path, {"serving/__init__.py": "", "serving/backends.py": BACKENDS.replace("{use}", use)})
    return pairs(lint(root).findings, "AL003")


def test_delegate_picked_by_a_method_of_its_own_is_forwarding(tmp_path):
    # SplitBackend's call reaches its own delegates: it is no site where ModelBackend could be.
    assert _found(tmp_path, "return self._select(batch).write_buffers(batch)") == []


def test_through_a_local_bound_to_the_selected_delegate(tmp_path):
    assert _found(tmp_path, "backend = self._select(batch)\n        return backend.write_buffers(batch)") == []


def test_a_method_returning_something_else_is_still_a_site(tmp_path):
    # `self._other()` returns an object that is not a delegate of the wrapper: a site for any backend.
    src = "return self._other().write_buffers(batch)\n\n    def _other(self) -> Backend:\n        return make()"
    root = write_tree(tmp_path, {"serving/__init__.py": "", "serving/backends.py":
                                 BACKENDS.replace("{use}", src) + "\n\ndef make() -> Backend:\n    return Backend()\n"})
    assert ("ModelBackend", "write_buffers") in pairs(lint(root).findings, "AL003")
