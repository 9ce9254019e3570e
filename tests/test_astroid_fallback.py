"""astroid answers only where the index cannot type a receiver, and says so in the evidence."""

import os

from attn_lint.linter.app.engine import Settings, analyse

BACKENDS = '''
class Backend:
    def forward(self, batch):
        raise NotImplementedError


class FlashBackend(Backend):
    def forward(self, batch):
        return batch

    def plan_chunks(self, batch):
        self.planned = batch


class HybridBackend(Backend):
    def __init__(self, full_attn_backend: Backend):
        self.full_attn_backend = full_attn_backend

    def forward(self, batch):
        return self.full_attn_backend.forward(batch)
'''

# The backend comes out of a registry dict: the index does not follow subscripts of dict
# literals, astroid does.
MODEL = '''
from serving.backends import FlashBackend, HybridBackend

_REGISTRY = {"flash": FlashBackend, "hybrid": HybridBackend}


def make_backend(name):
    return _REGISTRY[name](FlashBackend())


def prefill(batch):
    backend = make_backend("hybrid")
    if hasattr(make_backend("hybrid"), "plan_chunks"):
        backend.plan_chunks(batch)
'''


def _tree(tmp_path):
    pkg = tmp_path / "serving"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "backends.py").write_text(BACKENDS)
    (pkg / "model.py").write_text(MODEL)
    return str(pkg)


def test_receiver_typed_by_astroid_only(tmp_path):
    result = analyse([_tree(tmp_path)], Settings(cache_dir=None))
    assert [(f.code, f.class_name.rsplit(".", 1)[-1], f.member) for f in result.findings] == [
        ("AL001", "HybridBackend", "plan_chunks")]
    notes = [e.note for e in result.findings[0].evidence]
    assert any("resolved by astroid" in n for n in notes)
    assert any(n.startswith("astroid inferred the receiver as HybridBackend") for n in notes)
    assert result.stats["astroid_queries"] >= 1 and result.stats["astroid_answers"] >= 1


def test_without_astroid_the_unknown_receiver_is_not_reported(tmp_path):
    result = analyse([_tree(tmp_path)], Settings(cache_dir=None, astroid=False, select=("AL001",)))
    assert result.findings == []


def test_astroid_answers_are_remembered_between_runs(tmp_path):
    tree = _tree(tmp_path)
    cache = str(tmp_path / "cache")
    first = analyse([tree], Settings(cache_dir=cache), keep_context=True)
    second = analyse([tree], Settings(cache_dir=cache), keep_context=True)  # keep_context: rules run again
    assert first.stats["astroid_queries"] >= 1
    assert second.stats["astroid_queries"] == 0 and second.stats["astroid_answers"] >= 1
    assert [f.member for f in second.findings] == ["plan_chunks"]


def _bridge_on(tmp_path, **limits):
    from attn_lint.linter.inference.astroid_bridge import AstroidBridge
    result = analyse([_tree(tmp_path)], Settings(cache_dir=None, astroid=False), keep_context=True)
    ctx = result.context
    site, probe = ctx.probes["plan_chunks"][0]
    digests = {m.file.path: "digest-" + m.name for m in ctx.index.modules.values()}
    return AstroidBridge(ctx.index, memo={}, digests=digests, **limits), site, probe


def test_a_query_that_uses_its_whole_limit_is_not_asked_again(tmp_path):
    bridge, site, probe = _bridge_on(tmp_path, per_call=1e-6, budget=10.0)
    assert bridge.infer(site, probe.line, probe.col, "probe") is None
    assert bridge.timeouts == 1 and [answer for answer, *_ in bridge.memo.values()] == [()]  # remembered: no answer


def test_a_query_the_budget_left_no_time_for_is_asked_on_a_later_run(tmp_path):
    bridge, site, probe = _bridge_on(tmp_path, budget=0.0)
    assert bridge.infer(site, probe.line, probe.col, "probe") is None
    assert bridge.memo == {} and bridge.calls == 0


def test_astroids_one_off_setup_is_not_taken_from_a_querys_time(tmp_path, monkeypatch):
    """astroid builds its model of the builtins on first use (0.14 s here, more on a slow machine).
    Inside the first query that came out of the query's limit: with a setup as slow as the limit,
    astroid never answered. The setup now runs before the query's clock starts."""
    import time

    import astroid

    bridge, site, probe = _bridge_on(tmp_path, per_call=0.5, budget=0.5)
    manager = astroid.MANAGER
    bootstrap = manager.bootstrap

    def slow_bootstrap():
        time.sleep(0.6)  # longer than the query's whole limit
        bootstrap()

    monkeypatch.setattr(manager, "bootstrap", slow_bootstrap)
    manager.astroid_cache.clear()  # as in a fresh process: no builtins yet
    try:
        answer = bridge.infer(site, probe.line, probe.col, "probe")
    finally:
        monkeypatch.undo()
        manager.clear_cache()  # a whole, freshly bootstrapped manager for the tests after this one
    assert answer is not None and "HybridBackend" in str(answer.types)
    assert bridge.timeouts == 0 and bridge.spent < 0.5


# The registry lives in a module of its own: astroid's answer for the probe in model.py depends
# on registry.py, which the probe's file does not change with.
REGISTRY = '''
from serving.backends import FlashBackend, HybridBackend

_REGISTRY = {"flash": FlashBackend, "hybrid": %s}


def make_backend(name):
    return _REGISTRY[name](FlashBackend())
'''

MODEL_IMPORTING_THE_REGISTRY = '''
from serving.registry import make_backend


def prefill(batch):
    backend = make_backend("hybrid")
    if hasattr(make_backend("hybrid"), "plan_chunks"):
        backend.plan_chunks(batch)
'''


def registry_tree(tmp_path, hybrid: str = "HybridBackend"):
    """A tree whose one finding (AL001 on HybridBackend.plan_chunks) appears only while the
    registry in registry.py maps "hybrid" to HybridBackend; `set_registry` edits it."""
    pkg = tmp_path / "serving"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "backends.py").write_text(BACKENDS)
    (pkg / "model.py").write_text(MODEL_IMPORTING_THE_REGISTRY)
    set_registry(pkg, hybrid)
    return pkg


def set_registry(pkg, hybrid: str) -> None:
    path = pkg / "registry.py"
    old = path.stat().st_mtime_ns if path.exists() else 0
    path.write_text(REGISTRY % hybrid)
    st = path.stat()  # a coarse clock must see the edit too
    os.utime(path, ns=(st.st_atime_ns, max(st.st_mtime_ns, old + 5_000_000_000)))


def test_an_answer_is_not_reused_once_a_module_it_came_through_changes(tmp_path):
    pkg = registry_tree(tmp_path, "FlashBackend")
    cache = str(tmp_path / "cache")

    def members(**settings):
        return [f.member for f in analyse([str(pkg)], Settings(**settings), keep_context=True).findings]

    assert members(cache_dir=None) == members(cache_dir=cache) == []
    set_registry(pkg, "HybridBackend")  # the finding appears
    assert members(cache_dir=None) == members(cache_dir=cache) == ["plan_chunks"]
    set_registry(pkg, "FlashBackend")  # and goes again
    assert members(cache_dir=None) == members(cache_dir=cache) == []


# A tree function named like a builtin (its result typed only by astroid, through a registry):
# only a module that binds the name calls the tree's one.
HELPERS = '''
from serving.backends import FlashBackend, HybridBackend

_REGISTRY = {"hybrid": HybridBackend}


def next(items):
    return _REGISTRY["hybrid"](FlashBackend())
'''


def _probe_through_next(tmp_path, binds_next: bool) -> dict:
    pkg = tmp_path / "serving"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "backends.py").write_text(BACKENDS)
    (pkg / "helpers.py").write_text(HELPERS)
    head = "from serving.helpers import next\n" if binds_next else ""
    (pkg / "model.py").write_text(head + '''

def prefill(batch, backends):
    if hasattr(next(iter(backends)), "plan_chunks"):
        pass
''')
    return analyse([str(pkg)], Settings(cache_dir=None)).stats


def test_a_builtin_call_is_not_sent_to_astroid_though_the_tree_defines_the_name(tmp_path):
    assert _probe_through_next(tmp_path, binds_next=False)["astroid_queries"] == 0


def test_the_same_call_is_sent_where_the_module_binds_the_tree_function(tmp_path):
    assert _probe_through_next(tmp_path, binds_next=True)["astroid_queries"] == 1
