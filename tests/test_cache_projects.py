"""Caches keyed by everything they depend on: one project's answers never stand in for another's,
and a result is never served once a file it read has changed, analysed or not.

The trees make astroid decide a finding: the receiver comes out of a table in another module,
which the index does not follow. Before astroid's answers were kept per project and the whole
run's result checked what astroid had read, the first test's B lost its finding to A's answer
(and kept losing it from the cached result after A was deleted), and the second served the old
result after the table changed.
"""

from __future__ import annotations

import shutil

from conftest import write_tree
from test_astroid_fallback import BACKENDS

from attn_lint.linter.app.engine import Settings, analyse

MODEL = '''
from serving.backends import FlashBackend
from serving.registry import REGISTRY


def make_backend(name):
    return REGISTRY[name](FlashBackend())


def prefill(batch):
    backend = make_backend("hybrid")
    if hasattr(make_backend("hybrid"), "plan_chunks"):
        backend.plan_chunks(batch)
'''


def registry(cls: str) -> str:
    return f'''
from serving.backends import FlashBackend, HybridBackend

REGISTRY = {{"flash": FlashBackend, "hybrid": {cls}}}
'''


def project(root, cls: str):
    return write_tree(root, {"serving/__init__.py": "", "serving/backends.py": BACKENDS, "serving/model.py": MODEL,
                             "serving/registry.py": registry(cls)})


def found(result) -> list[tuple[str, str]]:
    return sorted((f.class_name.rsplit(".", 1)[-1], f.member) for f in result.findings)


def test_one_projects_astroid_answers_never_decide_anothers(tmp_path):
    cache = str(tmp_path / "cache")
    a = project(tmp_path / "a", "FlashBackend")  # the same probing file, another table
    b = project(tmp_path / "b", "HybridBackend")
    truth = found(analyse([str(b / "serving")], Settings(cache_dir=None)))
    assert truth == [("HybridBackend", "plan_chunks")]
    assert found(analyse([str(a / "serving")], Settings(cache_dir=cache))) == []
    assert found(analyse([str(b / "serving")], Settings(cache_dir=cache))) == truth
    shutil.rmtree(a)
    assert found(analyse([str(b / "serving")], Settings(cache_dir=cache))) == truth


def test_a_result_is_not_served_after_a_file_astroid_read_has_changed(tmp_path):
    """Only model.py and backends.py are analysed; astroid reads registry.py to type the receiver."""
    cache = str(tmp_path / "cache")
    root = project(tmp_path / "p", "HybridBackend")
    paths = [str(root / "serving" / "model.py"), str(root / "serving" / "backends.py")]
    assert found(analyse(paths, Settings(cache_dir=cache))) == [("HybridBackend", "plan_chunks")]
    (root / "serving" / "registry.py").write_text(registry("FlashBackend"))
    assert found(analyse(paths, Settings(cache_dir=None))) == []
    again = analyse(paths, Settings(cache_dir=cache))
    assert found(again) == []
    assert not again.stats.get("reused_result")
    reused = analyse(paths, Settings(cache_dir=cache))  # nothing changed since: the result is reused
    assert reused.stats.get("reused_result") and found(reused) == []


# --- bounded ------------------------------------------------------------------------------------

def test_the_cache_is_pruned_by_age_count_and_size(tmp_path, monkeypatch):
    import os
    import time

    from attn_lint.linter.perfile import cache as cache_mod
    from attn_lint.linter.perfile.cache import Cache

    monkeypatch.setattr(cache_mod, "MAX_SUMMARY_BYTES", 10_000)
    monkeypatch.setattr(cache_mod, "NAMED_KEPT", 5)
    c = Cache(str(tmp_path / "cache"))
    now = time.time()
    for n in range(8):  # results used n hours ago
        path = tmp_path / "cache" / f"result-{n:02d}.entry"
        path.write_bytes(b"x")
        os.utime(path, (now - 3600 * n, now - 3600 * n))
    stale = tmp_path / "cache" / "stat-old.entry"
    stale.write_bytes(b"x")
    os.utime(stale, (now - 40 * 86400, now - 40 * 86400))
    for n in range(12):  # 1,000-byte summaries written n minutes ago
        folder = tmp_path / "cache" / "summaries" / f"{n:02x}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{n:02x}ab.entry").write_bytes(b"s" * 1000)
        os.utime(folder / f"{n:02x}ab.entry", (now - 60 * n, now - 60 * n))
    (tmp_path / "cache" / "summaries" / "00" / "link.entry").symlink_to("/etc/hostname")
    assert c.prune_if_due(now)
    assert not c.prune_if_due(now + 60)  # once an hour
    left = sorted(p.name for p in (tmp_path / "cache").glob("result-*.entry"))
    assert left == [f"result-{n:02d}.entry" for n in range(5)]  # the five most recently used
    assert not stale.exists()
    summaries = sorted(p.name for p in (tmp_path / "cache" / "summaries").rglob("*ab.entry"))
    assert summaries == [f"{n:02x}ab.entry" for n in range(7)]  # the newest, in three quarters of the bound
    assert os.path.exists("/etc/hostname")


def test_new_since_adds_no_entry_of_its_own_per_run(tmp_path):
    import os
    import subprocess
    import sys
    root = project(tmp_path / "p", "HybridBackend")
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t", "XDG_CACHE_HOME": str(tmp_path / "cache"), "CI": "1"}
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "x"]):
        subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)

    def entries():
        return sorted(p.name for p in (tmp_path / "cache" / "attn-lint").glob("*.entry"))

    def run():
        proc = subprocess.run([sys.executable, "-m", "attn_lint", "--no-server", "--new-since", "HEAD", "."],
                              cwd=root, env=env, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr

    run()
    after_one = entries()
    run()
    run()
    assert entries() == after_one
