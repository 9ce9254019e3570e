"""A module-level name bound once to a class (`KVConnectorBaseType = KVConnectorBase_V1`) is that
class wherever it is written, an annotation included, as Python sees it.

Before: an annotation naming the alias typed nothing, so vLLM's `get_kv_transfer_group() ->
KVConnectorBaseType` left every call on the KV connector unresolved, and `MultiConnector`'s
inherited no-ops (`handle_preemptions`, `get_handshake_metadata`, `set_host_xfer_buffer_ops`,
`get_kv_connector_kv_cache_events`: drift fixed upstream release after release) were found in no
release.
"""

from __future__ import annotations

import pytest
from conftest import write_tree

from attn_lint.linter.app.engine import Settings, analyse

BASE = '''
class ConnectorBase:
    def handle_preemptions(self, ids):
        return None


class OffloadConnector(ConnectorBase):
    def handle_preemptions(self, ids):
        self.dropped = ids


class MultiConnector(ConnectorBase):
    def __init__(self, parts: list[ConnectorBase]):
        self._parts = parts

    def start(self, req):
        for c in self._parts:
            c.start(req)
'''

STATE = '''
from {pkg} import base as base_mod
from {pkg}.base import ConnectorBase

ConnectorType = {alias}

_AGENT: ConnectorType | None = None


def get_group() -> ConnectorType:
    return _AGENT
'''

RUNNER = '''
from {pkg}.state import get_group


def step(preempted):
    if preempted:
        get_group().handle_preemptions(preempted)
'''


def findings(tmp_path, alias="ConnectorBase", pkg="serving"):
    root = write_tree(tmp_path / "tree", {f"{pkg}/__init__.py": "", f"{pkg}/base.py": BASE,
                                          f"{pkg}/state.py": STATE.format(pkg=pkg, alias=alias),
                                          f"{pkg}/runner.py": RUNNER.format(pkg=pkg)}) / pkg
    result = analyse([str(root)], Settings(cache_dir=None, select=("AL003",)))
    return [(f.class_name.rsplit(".", 1)[-1], f.member, f.confidence) for f in result.findings]


def test_an_alias_of_the_base_types_the_receiver(tmp_path):
    assert findings(tmp_path) == [("MultiConnector", "handle_preemptions", "medium")]


def test_a_dotted_alias_too(tmp_path):
    assert findings(tmp_path, alias="base_mod.ConnectorBase") == [("MultiConnector", "handle_preemptions", "medium")]


@pytest.mark.parametrize("alias", ['"ConnectorBase"', "None", "dict"])
def test_an_alias_of_something_else_types_nothing(tmp_path, alias):
    assert findings(tmp_path, alias=alias) == []


def test_renamed_the_same(tmp_path):
    assert findings(tmp_path, pkg="engine") == [("MultiConnector", "handle_preemptions", "medium")]
