"""A delegate collection filled in a loop is what is put in it.

`self.backends = []` then `self.backends.append(make_backend(name))` for each configured name (or
`.extend(...)`, `self.table[key] = build(key)`): the wrapper holds what the factory builds. Before,
only the empty list was seen, so the class was no wrapper at all and its hidden hooks went
unreported.
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


def make_backend(name: str) -> Backend:
    if name == "flash":
        return FlashBackend()
    return TritonBackend()


class MultiBackend(Backend):
    def __init__(self, names):
{fill}

    def forward(self, batch):
        for b in {loop}:
            batch = b.forward(batch)
        return batch
{extra}"""

_MODEL = """
from serving.backends import Backend


def prefill(backend: Backend, batch):
    if hasattr(backend, "plan_chunks"):
        backend.plan_chunks(batch)
    return backend.forward(batch)
"""

FILLS = {
    "append": ("        self.backends = []\n        for name in names:\n"
               "            self.backends.append(make_backend(name))", "self.backends"),
    "extend": ("        self.backends = []\n        self.backends.extend([make_backend(n) for n in names])",
               "self.backends"),
    "extend-list": ("        self.backends = []\n        self.backends.extend([FlashBackend(), TritonBackend()])",
                    "self.backends"),
    "table": ("        self.table = {}\n        for name in names:\n"
              "            self.table[name] = make_backend(name)", "self.table.values()"),
}


def _tree(tmp_path, fill: str, extra: str = ""):
    code, loop = FILLS[fill]
    return write_tree(tmp_path, {"serving/__init__.py": "",
                                 "serving/backends.py": _BACKENDS.format(fill=code, loop=loop, extra=extra),
                                 "serving/model.py": _MODEL})


def _al001(root):
    result = lint(root, astroid=False)
    assert result.errors == []
    return sorted((f.class_name.rsplit(".", 1)[-1], f.member) for f in result.findings if f.code == "AL001")


@pytest.mark.parametrize("fill", ["append", "extend", "extend-list"])
def test_a_collection_filled_from_a_factory_holds_what_it_builds(tmp_path, fill):
    """INVALID before: MultiBackend was no wrapper (its list looked empty)."""
    assert _al001(_tree(tmp_path, fill)) == [("MultiBackend", "plan_chunks")]


def test_a_table_filled_by_key(tmp_path):
    found = _al001(_tree(tmp_path, "table"))
    assert found == [("MultiBackend", "plan_chunks")]


def test_a_wrapper_forwarding_the_hook_to_what_it_filled_is_not_reported(tmp_path):
    extra = ("\n    def plan_chunks(self, batch):\n        for b in self.backends:\n"
             "            if hasattr(b, \"plan_chunks\"):\n                b.plan_chunks(batch)\n")
    assert _al001(_tree(tmp_path, "append", extra)) == []


def test_the_same_with_every_name_changed(tmp_path):
    rename_tree(_tree(tmp_path / "src", "append"), tmp_path / "renamed")
    assert len(_al001(tmp_path / "renamed")) == 1
