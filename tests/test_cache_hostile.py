"""A cache folder is not trusted: planted, damaged or odd entries are misses, never code that runs,
a crash, a hang or a result; and a repository's configuration cannot choose where the cache is."""

from __future__ import annotations

import json
import os
import pickle
import shutil
import subprocess
import sys

import pytest
from conftest import FIXTURES, REPO, lint
from test_astroid_fallback import BACKENDS, MODEL

from attn_lint.linter.perfile.cache import Cache


def _json(result):
    return [f.to_json() for f in result.findings], [e.to_json() for e in result.errors]


@pytest.fixture
def tree(tmp_path):
    """A tree whose first run writes every kind of entry: summaries (one of a file with a syntax
    error), the file map, the result and astroid's answers."""
    root = tmp_path / "tree"
    shutil.copytree(FIXTURES / "al001_hidden_hook", root)
    (root / "broken.py").write_text("def broken(:\n")
    pkg = root / "astro"  # a receiver only astroid can type (test_astroid_fallback.py)
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "backends.py").write_text(BACKENDS)
    (pkg / "model.py").write_text(MODEL.replace("from serving.backends", "from astro.backends"))
    return root


def _entries(cache) -> list[str]:
    """Every entry; not the stamp that says when the cache was last pruned (an empty file)."""
    return sorted(os.path.join(d, n) for d, _, names in os.walk(cache) for n in names if n != "pruned")


def _first_run(tree, cache):
    first = lint(tree, cache_dir=str(cache))
    names = {os.path.basename(p).split("-")[0] for p in _entries(cache)}
    assert {"stat", "result", "astroid"} <= names, names  # and the summaries, one per file
    summaries = [p for p in _entries(cache) if os.sep + "summaries" + os.sep in p]
    assert len(summaries) >= first.stats["files"] - 3  # one per distinct content (some files are empty)
    assert first.stats["astroid_answers"] > 0
    return first


class _Payload:
    """A pickle that creates a file when it is loaded."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))


def test_planted_entries_never_run(tree, tmp_path):
    cache = tmp_path / "cache"
    reference = lint(tree, cache_dir=None)
    assert _json(_first_run(tree, cache)) == _json(reference)
    marker = tmp_path / "ran"
    planted = pickle.dumps(_Payload(str(marker)))
    for path in _entries(cache):
        with open(path, "wb") as fh:
            fh.write(planted)
    second = lint(tree, cache_dir=str(cache))
    assert not marker.exists(), "a planted cache entry ran"
    assert _json(second) == _json(reference)
    assert second.stats["parsed"] == second.stats["files"]  # every entry was a miss
    # the same through a pool of workers, which pass entries on to the parent undecoded
    for path in _entries(cache):
        with open(path, "wb") as fh:
            fh.write(planted)
    from attn_lint.linter.app import engine
    old = engine.PARALLEL_THRESHOLD
    engine.PARALLEL_THRESHOLD = 1
    try:
        third = lint(tree, cache_dir=str(cache), jobs=2)
    finally:
        engine.PARALLEL_THRESHOLD = old
    assert not marker.exists(), "a planted cache entry ran in a worker or on its way to the parent"
    assert _json(third) == _json(reference)


def test_planted_summaries_never_reach_the_parent_when_loaded_by_workers(tree, tmp_path, monkeypatch):
    """With the file map intact, a run loads the unchanged files' summaries; on a large tree the
    pool's workers read and check them and pass on only entries that decode, which the parent
    rebuilds unchecked. Planted ones are misses there too: parsed again, never run, never a result."""
    from attn_lint.linter.app import engine
    cache = tmp_path / "cache"
    reference = lint(tree, cache_dir=None)
    _first_run(tree, cache)
    monkeypatch.setattr(engine, "PARALLEL_THRESHOLD", 1)
    rebuilt = []
    own = engine.decode_own
    monkeypatch.setattr(engine, "decode_own", lambda plain: rebuilt.append(plain[0]) or own(plain))

    def without_results():
        for path in _entries(cache):
            if os.path.basename(path).startswith("result-"):
                os.unlink(path)

    without_results()
    loaded = lint(tree, cache_dir=str(cache), jobs=2)  # every summary through the workers
    assert loaded.stats["parsed"] == 0 and _json(loaded) == _json(reference)
    assert set(rebuilt) == set(loaded.digests.values())
    marker = tmp_path / "ran"
    planted = pickle.dumps(_Payload(str(marker)))
    for path in _entries(cache):
        if os.sep + "summaries" + os.sep in path:
            with open(path, "wb") as fh:
                fh.write(planted)
    without_results()
    second = lint(tree, cache_dir=str(cache), jobs=2)
    assert not marker.exists(), "a planted summary ran in a worker or on its way to the parent"
    assert second.stats["parsed"] == 0  # the file map held: every file was to be loaded...
    assert _json(second) == _json(reference)  # ...and each planted entry was a miss, parsed again


def _damaged(raw: bytes):
    """Truncations, single bit flips and giant lengths (pickle's and marshal's) of one entry."""
    yield raw[: len(raw) // 2]
    yield raw[:-1]
    yield raw[:3]
    yield b""
    for i in sorted({0, 3, 4, 19, 20, 21, len(raw) // 3, len(raw) // 2, len(raw) - 2, len(raw) - 1}):
        if 0 <= i < len(raw):
            for bit in (0x01, 0x20, 0x80):
                yield raw[:i] + bytes([raw[i] ^ bit]) + raw[i + 1:]
    half = raw[: len(raw) // 2]
    yield half + b"\x8d" + (2 ** 62).to_bytes(8, "little")  # pickle BINUNICODE8 of 4 EiB
    yield half + b"\x8e" + (2 ** 62).to_bytes(8, "little")  # pickle BINBYTES8
    yield half + b"(" + (2 ** 31 - 1).to_bytes(4, "little")  # marshal tuple of 2**31-1 items
    yield half + b"\xff" * 64


def _is_miss(cache: Cache, path: str) -> bool:
    name = os.path.basename(path)
    if os.sep + "summaries" + os.sep in path:
        return cache.get_summary(name.split(".")[0]) is None
    return cache.load(name) is None


def test_damaged_entries_are_misses(tree, tmp_path):
    cache_dir = tmp_path / "cache"
    reference = _json(_first_run(tree, cache_dir))
    cache = Cache(str(cache_dir))
    entries = _entries(cache_dir)
    originals = {p: open(p, "rb").read() for p in entries}
    for path, raw in originals.items():
        assert not _is_miss(cache, path), path  # the undamaged entry is served
        for bad in _damaged(raw):
            with open(path, "wb") as fh:
                fh.write(bad)
            assert _is_miss(cache, path), (path, bad[:40])
        with open(path, "wb") as fh:
            fh.write(raw)
    # Every bit of one small summary entry, flipped one at a time, is detected.
    small = min((p for p in entries if os.sep + "summaries" + os.sep in p), key=lambda p: len(originals[p]))
    raw = originals[small]
    for i in range(len(raw)):
        with open(small, "wb") as fh:
            fh.write(raw[:i] + bytes([raw[i] ^ (1 << (i % 8))]) + raw[i + 1:])
        assert _is_miss(cache, small), i
    with open(small, "wb") as fh:
        fh.write(raw)
    # A run over a cache where every entry is damaged parses again and finds the same.
    for path, raw in originals.items():
        with open(path, "wb") as fh:
            fh.write(raw[:-8] + bytes(b ^ 0x55 for b in raw[-8:]))
    second = lint(tree, cache_dir=str(cache_dir))
    assert second.stats["parsed"] == second.stats["files"]
    assert _json(second) == reference
    third = lint(tree, cache_dir=str(cache_dir))  # the damaged entries were replaced
    assert third.stats["parsed"] == 0 and _json(third) == reference


def test_an_entry_under_another_name_is_a_miss(tree, tmp_path):
    """Entries are bound to their names: a valid entry copied over another is not served."""
    cache_dir = tmp_path / "cache"
    reference = _json(_first_run(tree, cache_dir))
    summaries = [p for p in _entries(cache_dir) if os.sep + "summaries" + os.sep in p]
    donor = open(summaries[0], "rb").read()
    for path in summaries[1:]:
        with open(path, "wb") as fh:
            fh.write(donor)
    cache = Cache(str(cache_dir))
    assert all(_is_miss(cache, p) for p in summaries[1:])
    assert _json(lint(tree, cache_dir=str(cache_dir))) == reference


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are a POSIX thing")
def test_fifos_and_other_files_in_the_cache_do_not_block(tree, tmp_path):
    """FIFOs, links to FIFOs, folders and devices at entry names are misses; the run never waits."""
    cache_dir = tmp_path / "cache"
    reference = _json(_first_run(tree, cache_dir))
    fifo = tmp_path / "outside-fifo"
    os.mkfifo(fifo)
    for n, path in enumerate(_entries(cache_dir)):
        os.unlink(path)
        kind = n % 4
        if kind == 0:
            os.mkfifo(path)
        elif kind == 1:
            os.symlink(fifo, path)
        elif kind == 2:
            os.mkdir(path)
        else:
            os.symlink("/dev/zero", path)
    assert _lint_in_a_child(tree, cache_dir) == json.loads(json.dumps(list(reference)))


def _lint_in_a_child(tree, cache_dir, jobs: int | None = None):
    """The run's findings and errors (JSON), from a child with a time limit: a blocked open would
    hang the test run itself."""
    code = ("import json, sys; sys.path[:0] = [sys.argv[1], sys.argv[1] + '/tests'];"
            "from conftest import lint; jobs = int(sys.argv[4]) or None;"
            "r = lint(sys.argv[2], cache_dir=sys.argv[3], **({'jobs': jobs} if jobs else {}));"
            "print(json.dumps([[f.to_json() for f in r.findings], [e.to_json() for e in r.errors]]))")
    out = subprocess.run([sys.executable, "-c", code, str(REPO), str(tree), str(cache_dir), str(jobs or 0)],
                         capture_output=True, text=True, timeout=60, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


@pytest.mark.parametrize("value", ["../x", "../../elsewhere/cache", "inside-repo/../../x", "/tmp/abs", "~/x", "."])
def test_repo_config_cannot_choose_a_cache_folder_outside_the_users_cache(tmp_path, value):
    from attn_lint.linter.app.config import ConfigError, resolve
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "pyproject.toml").write_text(f'[tool.attn-lint]\ncache-dir = "{value}"\n')
    with pytest.raises(ConfigError, match="cache-dir"):
        resolve((str(repo),))


def test_repo_config_cache_dir_is_a_folder_in_the_users_cache(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from attn_lint.linter.app.cli import main
    from attn_lint.linter.app.config import resolve
    xdg = tmp_path / "xdg"
    monkeypatch.setenv("XDG_CACHE_HOME", str(xdg))
    repo = tmp_path / "repo"
    shutil.copytree(FIXTURES / "al001_hidden_hook", repo)
    (repo / "pyproject.toml").write_text('[tool.attn-lint]\ncache-dir = ".attn-cache"\n')
    settings = resolve((str(repo),)).settings
    assert settings.cache_dir == str(xdg / "attn-lint" / ".attn-cache")
    result = CliRunner().invoke(main, [str(repo)])
    assert result.exit_code == 1, result.output  # findings
    assert _entries(xdg / "attn-lint" / ".attn-cache")
    assert not (repo / ".attn-cache").exists()
    # the command line may choose any folder, the repository's own included
    chosen = repo / "chosen-on-the-command-line"
    assert resolve((str(repo),), cache_dir=str(chosen)).settings.cache_dir == str(chosen)
    assert CliRunner().invoke(main, [str(repo), "--cache-dir", str(chosen)]).exit_code == 1
    assert _entries(chosen)


def test_every_summary_survives_the_round_trip():
    """The decoder's checks accept everything the per-file pass makes (a check too strict would
    turn every run over such a file into a miss)."""
    from attn_lint.linter.app.engine import _parse_bytes
    from attn_lint.linter.perfile.cache import content_hash
    paths = [os.path.join(d, n) for top in ("fixtures", "linter", "rules", "runtime_check", "tests")
             for d, _, names in os.walk(REPO / top) for n in names if n.endswith(".py")]
    assert len(paths) > 50
    for path in paths:
        data = open(path, "rb").read()
        parsed = _parse_bytes(data, path, 8 << 20, content_hash(data))
        assert Cache.decode(Cache.encode(parsed), parsed.digest) == parsed, path


def test_sealed_entries_of_the_wrong_shape_are_misses():
    """The seal's key is no secret, so anyone who can write the cache folder can seal any plain data:
    the decoder's checks, memos included, must turn every wrong shape into a miss, and a value equal
    to one already checked (1 == 1.0 == True) must never bring its own types into a summary."""
    import marshal

    from attn_lint.linter.app.engine import _parse_bytes
    from attn_lint.linter.perfile.cache import content_hash, sealed
    from attn_lint.linter.perfile.codec import encode_parsed
    source = b"class A(B):\n    def f(self, x, *, y=1):\n        return self.g(x).h\n"
    parsed = _parse_bytes(source, "a.py", 1 << 20, content_hash(source))
    plain = encode_parsed(parsed)
    assert Cache.decode(sealed(parsed.digest, marshal.dumps(plain)), parsed.digest) == parsed

    def swap(value, old, new):  # every `old` (by type and value) anywhere in `value` replaced by `new`
        if type(value) is type(old) and value == old:
            return new
        if type(value) is tuple:
            return tuple(swap(v, old, new) for v in value)
        if type(value) is dict:
            return {k: swap(v, old, new) for k, v in value.items()}
        return value

    bad = [swap(plain, 1, 1.0), swap(plain, 1, True), swap(plain, ("name", "self"), ["name", "self"]),
           swap(plain, "self", b"self"), swap(plain, ("name", "x"), ("name", "x", "extra")),
           swap(plain, ("name", "x"), compile("0", "x", "eval")), swap(plain, False, 0)]
    deep = ("name", "x")
    for _ in range(500):
        deep = ("attr", deep, "a")
    bad.append(swap(plain, ("name", "x"), deep))
    for value in bad:
        got = Cache.decode(sealed(parsed.digest, marshal.dumps(value)), parsed.digest)
        # a miss, or (for a value equal to a checked one) exactly the checked summary
        assert got is None or repr(got) == repr(parsed), value



# --- packs: a large parse's new summaries, written together in one file ----------------------------

@pytest.fixture
def packed(tree, tmp_path, monkeypatch):
    """A cache after a first pooled run: every summary is in one pack, none in an entry file.
    (tree, cache, pack, the findings of a --no-cache run, the summaries as first stored)"""
    from attn_lint.linter.app import engine
    monkeypatch.setattr(engine, "PARALLEL_THRESHOLD", 1)
    cache = tmp_path / "cache"
    reference = _json(lint(tree, cache_dir=None))
    first = lint(tree, cache_dir=str(cache), jobs=2)
    assert _json(first) == reference
    packs = [p for p in _entries(cache) if p.endswith(".pack")]
    assert len(packs) == 1 and not _summary_files(cache)
    stored = Cache(str(cache))
    summaries = {d: stored.get_summary(d) for d in sorted(set(first.digests.values()))}
    assert all(s is not None for s in summaries.values())
    return tree, cache, packs[0], reference, summaries


def _summary_files(cache) -> list[str]:
    return [p for p in _entries(cache) if os.sep + "summaries" + os.sep in p]


def _forget_results(cache):
    """Drop the file map and the result: the next run reads every summary from the cache."""
    for path in _entries(cache):
        if os.path.basename(path).split("-")[0] in ("result", "stat"):
            os.unlink(path)


def _plant(paths, data: bytes):
    for path in paths:
        with open(path, "wb") as fh:
            fh.write(data)


def test_a_planted_pack_never_runs(packed, tmp_path):
    tree, cache, pack, reference, _ = packed
    marker = tmp_path / "ran"
    planted = pickle.dumps(_Payload(str(marker)))
    for jobs in (2, 1):  # read by the pool's workers, then by one process
        _forget_results(cache)
        _plant([p for p in _entries(cache) if p.endswith(".pack")], planted)
        again = lint(tree, cache_dir=str(cache), jobs=jobs)
        assert not marker.exists(), "a planted pack ran"
        assert _json(again) == reference


def test_a_damaged_pack_serves_nothing_wrong(packed):
    """Truncated, bit-flipped or lengthened, a pack serves each summary as it was or not at all,
    and a run over it finds what a --no-cache run finds."""
    tree, cache, pack, reference, summaries = packed
    raw = open(pack, "rb").read()
    variants = list(_damaged(raw)) + [raw[:i] + bytes([raw[i] ^ 0x10]) + raw[i + 1:]
                                      for i in range(0, len(raw), max(1, len(raw) // 400))]
    for n, bad in enumerate(variants):
        _plant([pack], bad)
        fresh = Cache(str(cache))
        for digest, summary in summaries.items():
            assert fresh.get_summary(digest) in (None, summary), (n, digest)
        if n % 20 == 0:
            _forget_results(cache)
            assert _json(lint(tree, cache_dir=str(cache), jobs=1)) == reference
            for path in _summary_files(cache):  # what that run wrote: the pack alone again
                os.unlink(path)


def test_a_damaged_pack_does_not_hide_entries_written_later(packed):
    tree, cache, pack, reference, summaries = packed
    raw = open(pack, "rb").read()
    _plant([pack], raw[:-8] + bytes(b ^ 0x55 for b in raw[-8:]))  # the last summary in it is lost
    lost = [d for d in summaries if Cache(str(cache)).get_summary(d) is None]
    assert len(lost) == 1
    _forget_results(cache)
    assert _json(lint(tree, cache_dir=str(cache), jobs=1)) == reference  # parses that file again...
    assert Cache(str(cache)).get_summary(lost[0]) == summaries[lost[0]]  # ...and its entry file serves


def _reindex(pack, change) -> None:
    """Rewrite a pack's index as `change(index)` returns it, sealed as the pack's writer would
    (the seal's key is no secret), and leave its entries as they are."""
    from attn_lint.linter.perfile import cache as cache_mod
    raw = open(pack, "rb").read()
    magic, head = len(cache_mod._PACK_MAGIC), cache_mod._PACK_HEAD
    n = int.from_bytes(raw[magic:head], "little")
    name = os.path.basename(pack)
    forged = cache_mod.seal(name, change(cache_mod.unseal(name, raw[head:head + n])))
    _plant([pack], raw[:magic] + len(forged).to_bytes(8, "little") + forged + raw[head + n:])


def test_a_pack_entry_under_another_name_is_a_miss(packed):
    """A pack's index that names one summary's bytes under another digest serves neither in place
    of the other."""
    tree, cache, pack, reference, summaries = packed
    _reindex(pack, lambda index: tuple((d, off, length) for (d, _, _), (_, off, length)
                                       in zip(index, index[1:] + index[:1])))
    fresh = Cache(str(cache))
    assert all(fresh.get_summary(d) is None for d in summaries)
    _forget_results(cache)
    assert _json(lint(tree, cache_dir=str(cache), jobs=2)) == reference


@pytest.mark.parametrize("length", [2 ** 40, -5])
def test_a_pack_index_out_of_bounds_is_refused(packed, length):
    tree, cache, pack, reference, summaries = packed
    _reindex(pack, lambda index: ((index[0][0], 0, length),) + tuple(index[1:]))
    fresh = Cache(str(cache))
    assert all(fresh.get_summary(d) is None for d in summaries)  # the whole index is refused
    _forget_results(cache)
    assert _json(lint(tree, cache_dir=str(cache), jobs=2)) == reference


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are a POSIX thing")
def test_a_fifo_or_device_at_a_pack_name_does_not_block(packed, tmp_path):
    tree, cache, pack, reference, _ = packed
    os.unlink(pack)
    os.mkfifo(pack)
    os.symlink("/dev/zero", os.path.join(os.path.dirname(pack), "pack-zero.pack"))
    _forget_results(cache)
    assert _lint_in_a_child(tree, cache, jobs=1) == json.loads(json.dumps(list(reference)))


def test_packs_written_later_are_seen_and_large_ones_are_split(packed, monkeypatch):
    """A cache object that looked before a pack was written (the resident server's) sees it; a
    pack is split where it would pass PACK_BYTES."""
    from attn_lint.linter.perfile import cache as cache_mod
    tree, cache, pack, reference, summaries = packed
    plains = {d: Cache(str(cache)).get_checked_plain(d) for d in summaries}
    os.unlink(pack)
    early = Cache(str(cache))
    assert all(early.get_summary(d) is None for d in summaries)
    monkeypatch.setattr(cache_mod, "PACK_BYTES", max(len(p) for p in plains.values()) * 2)
    Cache(str(cache)).put_pack(plains)
    packs = [p for p in _entries(cache) if p.endswith(".pack")]
    assert len(packs) > 1
    assert all(os.path.getsize(p) < 2 * cache_mod.PACK_BYTES + 4096 for p in packs)
    assert all(early.get_summary(d) == s for d, s in summaries.items())
