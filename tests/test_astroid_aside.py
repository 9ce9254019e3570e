"""astroid's queries in a child process while the rules go on (linter/inference/astroid_aside.py): the same
findings and answers as asking in place, the rules run twice only when astroid names a class, and
a child that dies or a fork that fails costs answers, never the run."""

import os

import pytest
from test_astroid_fallback import MODEL, _tree

from attn_lint.linter.app import engine
from attn_lint.linter.app.engine import Settings, analyse
from attn_lint.linter.inference import astroid_bridge, astroid_child

# The same probe, on a receiver astroid cannot type either: a query with no answer.
UNANSWERED = MODEL.replace('_REGISTRY = {"flash": FlashBackend, "hybrid": HybridBackend}',
                           'import importlib\n_REGISTRY = importlib.import_module("elsewhere").REGISTRY')


def _run(tree, **settings):
    result = analyse([tree], Settings(cache_dir=None, **settings))
    keep = ("astroid_queries", "astroid_answers")
    return [f.to_json() for f in result.findings], {k: result.stats[k] for k in keep}


@pytest.fixture
def aside(monkeypatch):
    """Aside on a small tree (it is kept for large ones); the pid of every process that infers and
    the number of times the rules run are logged."""
    monkeypatch.setattr(engine, "PARALLEL_THRESHOLD", 1)
    log = {"infer": [], "rules": 0}
    infer = astroid_bridge.AstroidBridge._raw_infer
    pids = os.pipe()

    def logged(self, *query):
        os.write(pids[1], f"{os.getpid()}\n".encode())
        return infer(self, *query)

    monkeypatch.setattr(astroid_bridge.AstroidBridge, "_raw_infer", logged)
    from attn_lint.rules.al001_unforwarded_hook import UnforwardedHook
    check = UnforwardedHook.check

    def counted(self, ctx):
        log["rules"] += 1
        return check(self, ctx)

    monkeypatch.setattr(UnforwardedHook, "check", counted)

    def inferred_in() -> list[int]:
        os.close(pids[1])
        with os.fdopen(pids[0]) as fh:
            return [int(p) for p in fh.read().split()]

    log["pids"] = inferred_in
    yield log


def test_an_answer_found_aside_gives_the_findings_of_asking_in_place(tmp_path, aside):
    tree = _tree(tmp_path)
    in_place = _run(tree, jobs=1)  # one process asked for: astroid in place
    assert in_place[1]["astroid_answers"] >= 1 and in_place[0]
    aside["rules"] = 0
    assert _run(tree, jobs=2) == in_place
    assert aside["rules"] == 2  # astroid named a class: the rules ran again to read it
    from attn_lint.linter.inference.side_process import PARENT_ONLY_FDS
    assert not PARENT_ONLY_FDS  # the child's pipes are closed
    pids = aside["pids"]()
    assert os.getpid() in pids  # the in-place run
    assert [p for p in pids if p != os.getpid()]  # the aside run's queries: in a child


def test_no_answer_aside_runs_the_rules_once(tmp_path, aside):
    tree = _tree(tmp_path)
    (tmp_path / "serving" / "model.py").write_text(UNANSWERED)
    in_place = _run(tree, jobs=1)
    assert in_place[1]["astroid_queries"] >= 1 and in_place[1]["astroid_answers"] == 0
    aside["rules"] = 0
    assert _run(tree, jobs=2) == in_place
    assert aside["rules"] == 1
    aside_pids = aside["pids"]()[in_place[1]["astroid_queries"]:]
    assert aside_pids and os.getpid() not in aside_pids  # the aside run asked, and in a child


def test_a_child_that_dies_costs_its_answers_not_the_run(tmp_path, monkeypatch):
    monkeypatch.setattr(engine, "PARALLEL_THRESHOLD", 1)
    tree = _tree(tmp_path)
    without = _run(tree, astroid=False)
    monkeypatch.setattr(astroid_child, "_serve", lambda *args: os._exit(3))
    findings, stats = _run(tree, jobs=2)
    assert findings == without[0] and stats["astroid_answers"] == 0


def test_a_child_that_never_answers_is_given_up_on(tmp_path, monkeypatch):
    import time
    monkeypatch.setattr(engine, "PARALLEL_THRESHOLD", 1)
    monkeypatch.setattr(astroid_child, "_SLACK", 0.5)
    tree = _tree(tmp_path)
    without = _run(tree, astroid=False)
    monkeypatch.setattr(astroid_child, "_serve", lambda *args: time.sleep(60))
    start = time.monotonic()
    findings, stats = _run(tree, jobs=2)
    assert time.monotonic() - start < 10
    assert findings == without[0] and stats["astroid_answers"] == 0


def test_without_fork_astroid_is_asked_in_place(tmp_path, monkeypatch):
    monkeypatch.setattr(engine, "PARALLEL_THRESHOLD", 1)
    tree = _tree(tmp_path)
    in_place = _run(tree, jobs=1)

    def no_fork():
        raise OSError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(astroid_child.AstroidChild, "fork", staticmethod(no_fork))
    assert _run(tree, jobs=2) == in_place
