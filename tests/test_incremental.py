"""What makes repeated runs cheap must never change an answer: the remembered discovery, the
per-module facts, the in-memory cache of the resident server, and evidence that does not depend on
the interpreter's hash seed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest
from conftest import FIXTURES, lint, write_tree

from attn_lint.linter.app.engine import Settings, analyse
from attn_lint.linter.app.server import ResidentCache
from attn_lint.linter.files import discover as discover_module
from attn_lint.linter.model import facts as module_facts


def _age(root, seconds: float = 60.0) -> None:
    """Give every folder an old mtime, as a tree not touched in the last second has."""
    past = time.time() - seconds
    for d, _, _ in os.walk(root):
        os.utime(d, (past, past))
    os.utime(root.parent, (past, past))


@pytest.fixture
def remembering(monkeypatch):
    monkeypatch.setattr(discover_module, "_REMEMBERED", {})


def test_remembered_discovery_is_reused_until_a_folder_changes(tmp_path, remembering, monkeypatch):
    root = write_tree(tmp_path / "t", {"pkg/__init__.py": "", "pkg/a.py": "x = 1\n", "pkg/sub/b.py": "y = 2\n"})
    _age(root)
    first, _ = discover_module.discover([str(root)], remember=8)
    calls = []
    real = discover_module._discover
    monkeypatch.setattr(discover_module, "_discover", lambda *a: calls.append(a) or real(*a))
    again, _ = discover_module.discover([str(root)], remember=8)
    assert [f.module for f in again] == [f.module for f in first] and calls == []  # nothing re-walked

    (root / "pkg" / "sub" / "c.py").write_text("z = 3\n")  # a new entry changes its folder's mtime
    found, _ = discover_module.discover([str(root)], remember=8)
    assert len(calls) == 1 and "pkg.sub.c" in {f.module for f in found}


def test_new_package_marker_changes_module_names(tmp_path, remembering):
    root = write_tree(tmp_path / "t", {"pkg/sub/b.py": "y = 2\n"})
    _age(root)
    before, _ = discover_module.discover([str(root / "pkg" / "sub")], remember=8)
    (root / "pkg" / "__init__.py").write_text("")  # a folder above the argument becomes a package
    (root / "pkg" / "sub" / "__init__.py").write_text("")
    after, _ = discover_module.discover([str(root / "pkg" / "sub")], remember=8)
    assert before[0].module != after[0].module and "pkg.sub.b" in {f.module for f in after}


def test_recently_changed_folders_are_not_remembered(tmp_path, remembering):
    root = write_tree(tmp_path / "t", {"a.py": "x = 1\n"})  # written just now
    discover_module.discover([str(root)], remember=8)
    assert discover_module._REMEMBERED == {}


def test_facts_are_kept_per_summary_and_forgotten_with_it(tmp_path):
    tree = write_tree(tmp_path / "t", {"m.py": "class A:\n    def f(self):\n        return hasattr(self, 'x')\n"})
    lint(tree)
    keys = set(module_facts._FACTS)
    assert len(keys) == 1
    (tree / "m.py").write_text("class A:\n    def g(self):\n        pass\n")
    lint(tree)
    assert set(module_facts._FACTS).isdisjoint(keys) and len(module_facts._FACTS) == 1  # a one-shot cache keeps one path set


def test_resident_cache_gives_the_same_findings_as_a_fresh_run(tmp_path, monkeypatch):
    """The server's path in one process: summaries, facts and results kept between runs."""
    cache = ResidentCache(str(tmp_path / "cache"))
    settings = Settings(cache_dir=str(tmp_path / "cache"), jobs=1)
    tree = tmp_path / "tree"
    import shutil
    shutil.copytree(FIXTURES / "al001_hidden_hook", tree)

    def same(result):
        fresh = lint(tree)
        return [f.sort_key + (f.message,) for f in result.findings] == \
               [f.sort_key + (f.message,) for f in fresh.findings]

    assert same(analyse([str(tree)], settings, cache=cache))
    hybrid = tree / "serving" / "backends" / "hybrid_linear_attn_backend.py"
    hybrid.write_text((FIXTURES / "al002_delegation_typeerror" / "serving" / "backends" /
                       "hybrid_linear_attn_backend.py").read_text())
    second = analyse([str(tree)], settings, cache=cache)
    assert same(second) and second.stats["parsed"] == 1 and [f.code for f in second.findings] == ["AL002"]
    cache.trim()
    contents = {open(f.path, "rb").read() for f in second.files}
    assert len(cache.summaries) == len(contents)  # one per distinct content in use: the old version went


def test_evidence_does_not_depend_on_the_hash_seed(tmp_path):
    outputs = set()
    for seed in ("1", "2", "3"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        proc = subprocess.run([sys.executable, "-m", "attn_lint", "--format", "json", "--no-cache", str(FIXTURES)],
                              capture_output=True, text=True, env=env, timeout=120)
        outputs.add(json.dumps(json.loads(proc.stdout)["findings"]))
    assert len(outputs) == 1
