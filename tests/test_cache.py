"""The on-disk cache: a second run reuses it, an edit re-parses only the edited file, --no-cache writes nothing."""

from __future__ import annotations

import os
import shutil

import pytest
from conftest import FIXTURES, lint, pairs

HOOK = '''
    def init_mha_chunk_metadata(self, forward_batch: ForwardBatch):
        init = getattr(self.full_attn_backend, "init_mha_chunk_metadata", None)
        if init is not None:
            init(forward_batch)
'''


@pytest.fixture
def tree(tmp_path):
    root = tmp_path / "tree"
    shutil.copytree(FIXTURES / "al001_hidden_hook", root)
    return root


def _json(result):
    return [f.to_json() for f in result.findings]


def _files_under(folder) -> list[str]:
    return sorted(os.path.join(d, n) for d, _, names in os.walk(folder) for n in names)


def _edit(path, text):
    """Write new content and move the mtime on, so even a coarse clock sees the change."""
    st = path.stat()
    path.write_text(text)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))


def test_second_run_reuses_the_cache(tree, tmp_path):
    cache = tmp_path / "cache"
    first = lint(tree, cache_dir=str(cache))
    n = first.stats["files"]
    assert first.stats["parsed"] == n and first.stats["cached"] == 0
    assert pairs(first.findings) == [("HybridLinearAttnBackend", "init_mha_chunk_metadata")]
    second = lint(tree, cache_dir=str(cache))
    assert second.stats["parsed"] == 0
    assert second.stats["cached"] == n
    assert _json(second) == _json(first)
    assert second.stats["files"] == n and second.stats["lines"] == first.stats["lines"]
    assert second.stats["by_rule"] == first.stats["by_rule"]


def test_editing_one_file_reparses_only_that_file(tree, tmp_path):
    cache = str(tmp_path / "cache")
    first = lint(tree, cache_dir=cache)
    hybrid = tree / "serving" / "backends" / "hybrid_linear_attn_backend.py"
    text = hybrid.read_text()
    marker = "    def forward_decode("
    _edit(hybrid, text.replace(marker, HOOK.lstrip("\n") + "\n" + marker, 1))
    second = lint(tree, cache_dir=cache)
    assert second.stats["parsed"] == 1
    assert second.stats["cached"] == first.stats["files"] - 1
    assert [f for f in second.findings if f.code == "AL001"] == [], "the edit (forwarding the hook) fixed the finding"
    # and back: the old finding returns, again parsing one file
    _edit(hybrid, text)
    third = lint(tree, cache_dir=cache)
    assert third.stats["parsed"] == 1
    assert _json(third) == _json(first)


def test_editing_a_probe_site_is_seen(tree, tmp_path):
    """Findings depend on other files: an edit far from the wrapper still changes the result."""
    cache = str(tmp_path / "cache")
    assert lint(tree, cache_dir=cache).findings
    for rel in ("serving/models/forward_mha.py", "serving/models/sarvam_moe.py"):
        path = tree / rel
        _edit(path, path.read_text().replace('hasattr(', 'callable(getattr(').replace(
            '"init_mha_chunk_metadata")', '"forward_extend"))'))
    second = lint(tree, cache_dir=cache)
    assert second.stats["parsed"] == 2
    assert [f for f in second.findings if f.code == "AL001"] == []


def test_new_and_deleted_files(tree, tmp_path):
    cache = str(tmp_path / "cache")
    first = lint(tree, cache_dir=cache)
    (tree / "serving" / "extra.py").write_text("X = 1\n")
    second = lint(tree, cache_dir=cache)
    assert second.stats["parsed"] == 1 and second.stats["files"] == first.stats["files"] + 1
    (tree / "serving" / "extra.py").unlink()
    (tree / "serving" / "models" / "sarvam_moe.py").unlink()
    third = lint(tree, cache_dir=cache)
    assert third.stats["parsed"] == 0 and third.stats["files"] == first.stats["files"] - 1
    assert pairs(third.findings) == pairs(first.findings)  # forward_mha.py still probes


def test_corrupt_cache_entries_are_misses(tree, tmp_path):
    cache = tmp_path / "cache"
    first = lint(tree, cache_dir=str(cache))
    for path in _files_under(cache):
        with open(path, "wb") as fh:
            fh.write(b"not a pickle")
    second = lint(tree, cache_dir=str(cache))
    assert second.stats["parsed"] == first.stats["files"]
    assert _json(second) == _json(first)
    third = lint(tree, cache_dir=str(cache))
    assert third.stats["parsed"] == 0 and _json(third) == _json(first)


def test_unwritable_cache_dir_degrades_to_no_cache(tree, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    result = lint(tree, cache_dir=str(blocker / "cache"))  # cannot be created: a file is in the way
    assert pairs(result.findings) == [("HybridLinearAttnBackend", "init_mha_chunk_metadata")]


def test_no_cache_setting_writes_nothing(tree, tmp_path):
    result = lint(tree, cache_dir=None)
    assert result.findings
    assert not any(p.name == "attn-lint" for p in tmp_path.rglob("*"))


def test_cli_cache_locations(tree, tmp_path):
    """The CLI's default cache is $XDG_CACHE_HOME/attn-lint; --cache-dir moves it; --no-cache writes nothing."""
    from click.testing import CliRunner

    from attn_lint.linter.app.cli import main

    runner = CliRunner()
    xdg = tmp_path / "xdg"
    env = {"XDG_CACHE_HOME": str(xdg)}

    assert runner.invoke(main, [str(tree), "--no-cache"], env=env).exit_code == 1
    assert not xdg.exists() or _files_under(xdg) == []

    explicit = tmp_path / "explicit"
    assert runner.invoke(main, [str(tree), "--cache-dir", str(explicit)], env=env).exit_code == 1
    assert _files_under(explicit)
    assert not xdg.exists() or _files_under(xdg) == []

    assert runner.invoke(main, [str(tree)], env=env).exit_code == 1
    assert _files_under(xdg / "attn-lint")


def _pooled(monkeypatch):
    from attn_lint.linter.app import engine
    monkeypatch.setattr(engine, "PARALLEL_THRESHOLD", 1)


def _summary_entries(cache) -> list[str]:
    return [p for p in _files_under(cache / "summaries") if p.endswith(".entry")]


def _record_writers(monkeypatch, log):
    """Log the pid of every process that writes summaries, once per entry file and once per pack
    with the number of summaries in it (a forked child logs too)."""
    from attn_lint.linter.perfile.cache import Cache
    put, put_pack = Cache.put_raw, Cache.put_pack

    def logged(self, digest, raw):
        with open(log, "a") as fh:
            fh.write(f"entry {os.getpid()} 1\n")
        put(self, digest, raw)

    def logged_pack(self, plains):
        with open(log, "a") as fh:
            fh.write(f"pack {os.getpid()} {len(plains)}\n")
        put_pack(self, plains)

    monkeypatch.setattr(Cache, "put_raw", logged)
    monkeypatch.setattr(Cache, "put_pack", logged_pack)


def _writes(log) -> list[tuple[str, int, int]]:
    return [(kind, int(pid), int(n)) for kind, pid, n in (line.split() for line in log.read_text().splitlines())]


def test_a_pooled_run_writes_its_new_entries_from_one_child_before_it_returns(tree, tmp_path, monkeypatch):
    """The workers hand new summaries to the parent, and a forked child writes them, in one pack,
    while the tree passes run: one writer, neither the parent nor a worker, done when the run
    returns."""
    _pooled(monkeypatch)
    log = tmp_path / "writers"
    _record_writers(monkeypatch, log)
    readers = tmp_path / "readers"  # the processes that read the sources: the pool's workers
    from attn_lint.linter.app import engine
    read = engine._read

    def logged_read(path, max_bytes):
        with open(readers, "a") as fh:
            fh.write(f"{os.getpid()}\n")
        return read(path, max_bytes)

    monkeypatch.setattr(engine, "_read", logged_read)
    cache = tmp_path / "cache"
    first = lint(tree, cache_dir=str(cache), jobs=2)
    writes = _writes(log)
    assert [(kind, n) for kind, _, n in writes] == [("pack", len(set(first.digests.values())))]
    writer = writes[0][1]
    assert writer != os.getpid() and str(writer) not in set(readers.read_text().split())
    assert _summary_entries(cache) == [] and len(_files_under(cache / "packs")) == 1
    from attn_lint.linter.perfile.cache import Cache
    stored = Cache(str(cache))
    assert all(stored.get_summary(d) is not None for d in first.digests.values())
    # The pack is what a run reads: with the stat map and the result gone, nothing is parsed.
    for name in os.listdir(cache):
        if name.endswith(".entry"):
            os.unlink(cache / name)
    log.unlink()
    second = lint(tree, cache_dir=str(cache), jobs=2)
    assert _json(second) == _json(first)
    assert second.stats["parsed"] == second.stats["files"]  # every file read again (no stat map)...
    assert not log.exists()  # ...and every summary came from the pack: nothing new to write
    for name in os.listdir(cache):
        if name.endswith(".entry"):
            os.unlink(cache / name)
    serial = lint(tree, cache_dir=str(cache), jobs=1)  # one process reads the pack too
    assert not log.exists()
    assert _json(serial) == _json(first)


def test_without_a_process_to_spare_the_workers_write_them(tree, tmp_path, monkeypatch):
    _pooled(monkeypatch)
    log = tmp_path / "writers"
    _record_writers(monkeypatch, log)

    def no_fork():
        raise OSError(11, "Resource temporarily unavailable")

    from attn_lint.linter.app import engine
    monkeypatch.setattr(engine._LateWrites, "fork", staticmethod(no_fork))
    cache = tmp_path / "cache"
    first = lint(tree, cache_dir=str(cache), jobs=2)
    writes = _writes(log)
    assert {kind for kind, _, _ in writes} == {"entry"} and os.getpid() not in {pid for _, pid, _ in writes}
    assert len(_summary_entries(cache)) == len(set(first.digests.values()))
    from attn_lint.linter.perfile.cache import Cache
    stored = Cache(str(cache))
    assert all(stored.get_summary(d) is not None for d in first.digests.values())


_SUMMARY_BYTES = """
import hashlib, os, sys
from attn_lint.linter.perfile.cache import Cache
from attn_lint.linter.perfile.codec import Parsed
from attn_lint.linter.perfile.summary import summarise_source
h = hashlib.sha256()
for folder, dirs, names in sorted(os.walk(sys.argv[1])):
    dirs.sort()
    for name in sorted(n for n in names if n.endswith(".py")):
        path = os.path.join(folder, name)
        with open(path, "rb") as fh:
            h.update(Cache.plain_bytes(Parsed("x", summarise_source(fh.read(), path), None)))
print(h.hexdigest())
"""


def test_summaries_are_the_same_bytes_under_any_hash_seed(tmp_path):
    """A cache entry's bytes depend on the file alone: a function's kept locals were once ordered
    by a set of names, so two runs (or two machines) stored different bytes for one file."""
    import subprocess
    import sys

    names = [f"backend_{i}" for i in range(12)]
    body = "".join(f"        {n} = self.{n}\n" for n in names) + "".join(f"        {n}.plan(batch)\n" for n in names)
    (tmp_path / "runner.py").write_text(f"class Runner:\n    def step(self, batch):\n{body}")
    shutil.copytree(FIXTURES / "al001_hidden_hook", tmp_path / "fixture")

    def digest(seed: str) -> str:
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": os.pathsep.join(sys.path)}
        return subprocess.run([sys.executable, "-c", _SUMMARY_BYTES, str(tmp_path)], env=env, check=True,
                              capture_output=True, text=True).stdout
    assert digest("1") == digest("2") == digest("3")


def test_the_writers_spool_keeps_what_was_whole(tmp_path):
    """The parent appends new summaries to a spool the writer reads at the end; a write cut short
    (a full disk) loses that entry and the ones after it, never a whole one before it."""
    from attn_lint.linter.app.engine import _LateWrites
    entries = {f"{n:040x}": bytes([n]) * (1000 * n + 1) for n in range(1, 6)}
    late = _LateWrites()
    spool = tmp_path / "spool"
    late._spool = os.open(spool, os.O_RDWR | os.O_CREAT)
    for digest, plain in entries.items():
        late.add(digest, plain)
        late.add(digest, b"a second copy is not sent")
    fd = late._spool
    assert late._read_spool(fd) == entries
    os.ftruncate(fd, os.fstat(fd).st_size - 10)
    assert late._read_spool(fd) == dict(list(entries.items())[:4])
    late.start()


def test_a_short_write_to_the_spool_ends_it(tmp_path, monkeypatch):
    """A full disk can cut a write short without an error: nothing is appended after the cut,
    so the writer reads the whole entries before it and nothing misframed after."""
    from attn_lint.linter.app import engine
    from attn_lint.linter.app.engine import _LateWrites
    entries = {f"{n:040x}": bytes([n]) * (100 * n + 1) for n in range(1, 5)}
    late = _LateWrites()
    late._spool = os.open(tmp_path / "spool", os.O_RDWR | os.O_CREAT)
    fd = os.dup(late._spool)  # the writer's copy: the parent closes its own at the cut
    writev = os.writev
    calls = []

    def short(fd, buffers):
        calls.append(fd)
        if len(calls) == 2:  # the second entry: half of it reaches the disk
            data = b"".join(buffers)
            return os.write(fd, data[:len(data) // 2])
        return writev(fd, buffers)

    monkeypatch.setattr(engine.os, "writev", short)
    for digest, plain in entries.items():
        late.add(digest, plain)
    assert late._spool == -1 and len(calls) == 2
    assert late._read_spool(fd) == dict(list(entries.items())[:1])
    os.close(fd)


def test_a_full_disk_under_the_spool_costs_entries_not_the_run(tree, tmp_path, monkeypatch):
    _pooled(monkeypatch)
    writev = os.writev
    calls = []

    def failing(fd, buffers):
        calls.append(fd)
        if len(calls) > 2:
            raise OSError(28, "No space left on device")
        return writev(fd, buffers)

    from attn_lint.linter.app import engine
    monkeypatch.setattr(engine.os, "writev", failing)
    cache = tmp_path / "cache"
    first = lint(tree, cache_dir=str(cache), jobs=2)
    assert _json(first) == _json(lint(tree, cache_dir=None))
    monkeypatch.setattr(engine.os, "writev", writev)
    from attn_lint.linter.perfile.cache import Cache
    stored = Cache(str(cache))
    assert sum(stored.get_summary(d) is not None for d in set(first.digests.values())) == 2
