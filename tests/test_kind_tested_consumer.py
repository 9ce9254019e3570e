"""A consumer call made only where a test of the object's kind holds does not rule a wrapper out.

`unsupported-pairing` reads code that calls, unguarded, a member only an implementation's lineage
has on the installed object (`scheduler.connector.finished_all_groups(...)`): a wrapper lacking it
could not be installed there, so its pairings are ruled out. A call behind `if not
isinstance(self.connector, SupportsGroups): return ...` is not unguarded: it runs only on the
kinds the test names, and every other object takes the other branch. vLLM 0.20.2: the scheduler's
`request_finished_all_groups` call behind `isinstance(self.connector, SupportsHMA)` ruled out
`MultiConnector` holding `SimpleCPUOffloadConnector`, and with it the real hidden hook
`bind_gpu_block_pool` (fixed upstream in 0.22.0).
"""

from __future__ import annotations

from conftest import write_tree

from attn_lint.linter.app.engine import Settings, analyse

CONNECTORS = '''
class SupportsGroups:
    def finished_all_groups(self, req):
        raise NotImplementedError


class Connector:
    def finished(self, req):
        return None


class OffloadConnector(Connector, SupportsGroups):
    def bind_pool(self, pool):
        self.pool = pool

    def finished_all_groups(self, req):
        return None


class PlainConnector(Connector):
    pass


TABLE = {"offload": OffloadConnector, "plain": PlainConnector}


def make(name) -> Connector:
    if isinstance(name, list):
        from .multi import MultiConnector

        return MultiConnector(name)
    return TABLE[name]()
'''

MULTI = '''
from .connectors import Connector, make


class MultiConnector(Connector):
    def __init__(self, names):
        self.connectors = []
        for n in names:
            self.connectors.append(make(n))

    def finished(self, req):
        for c in self.connectors:
            c.finished(req)
'''

SCHEDULER = '''
from .connectors import Connector, SupportsGroups, make


class Scheduler:
    def __init__(self, name, pool):
        self.connector: Connector | None = make(name)
        if hasattr(self.connector, "bind_pool"):
            self.connector.bind_pool(pool)

    def finish(self, req):
        if not isinstance(self.connector, SupportsGroups):
            return self.connector.finished(req)
        return self.connector.finished_all_groups(req)
'''


def findings(tmp_path, scheduler: str = SCHEDULER, rename=lambda s: s):
    pkg = rename("serving")
    root = write_tree(tmp_path / "tree", {f"{pkg}/__init__.py": "", f"{pkg}/{rename('connectors')}.py": rename(CONNECTORS),
                                           f"{pkg}/multi.py": rename(MULTI),
                                           f"{pkg}/scheduler.py": rename(scheduler)}) / pkg
    result = analyse([str(root)], Settings(cache_dir=None, select=("AL001",)))
    return [(f.class_name.rsplit(".", 1)[-1], f.member, f.confidence) for f in result.findings + list(result.latent)]


def test_a_kind_tested_call_does_not_rule_the_wrapper_out(tmp_path):
    assert findings(tmp_path) == [("MultiConnector", "bind_pool", "medium")]


def test_the_same_call_unguarded_still_does(tmp_path):
    unguarded = SCHEDULER.replace("        if not isinstance(self.connector, SupportsGroups):\n"
                                  "            return self.connector.finished(req)\n", "")
    assert unguarded != SCHEDULER
    assert findings(tmp_path, unguarded) == [("MultiConnector", "bind_pool", "low")]


def test_inside_the_kind_test_too(tmp_path):
    inside = SCHEDULER.replace("        if not isinstance(self.connector, SupportsGroups):\n"
                               "            return self.connector.finished(req)\n"
                               "        return self.connector.finished_all_groups(req)\n",
                               "        if isinstance(self.connector, SupportsGroups):\n"
                               "            return self.connector.finished_all_groups(req)\n"
                               "        return self.connector.finished(req)\n")
    assert inside != SCHEDULER
    assert findings(tmp_path, inside) == [("MultiConnector", "bind_pool", "medium")]


def test_renamed_the_same(tmp_path):
    names = {"SupportsGroups": "HasTiers", "OffloadConnector": "SpillLink", "MultiConnector": "FanLink",
             "Connector": "Link", "bind_pool": "attach_blocks", "finished_all_groups": "done_tiers",
             "serving": "engine", "connectors": "links", "Scheduler": "Planner"}

    def rename(text):
        for a, b in names.items():
            text = text.replace(a, b)
        return text

    assert findings(tmp_path, rename=rename) == [("FanLink", "attach_blocks", "medium")]
