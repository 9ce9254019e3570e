"""The pre-commit hook's `--new-since HEAD` names the analysed contents by git blob id. Before, it
read and hashed every analysed file on every run (4,719 files on sglang: most of the hook's cost
over a plain warm run, 3.2× it). Now a content digest the engine already has (from its stat map,
no read) maps to the blob id an earlier run computed: a file is read only when its contents are
new. The pairs are content-addressed, so they never go stale."""

from __future__ import annotations

from attn_lint.linter.app import revision_reuse as reuse
from attn_lint.linter.perfile.cache import content_hash


def tree(tmp_path, n=5):
    paths = []
    for i in range(n):
        p = tmp_path / f"m{i}.py"
        p.write_text(f"X = {i}\n")
        paths.append(str(p))
    return paths


def test_known_contents_are_not_read_again(tmp_path, monkeypatch):
    paths = tree(tmp_path)
    digests = {p: content_hash(open(p, "rb").read()) for p in paths}
    known: dict[str, str] = {}
    first = reuse.work_files(paths, str(tmp_path), digests, known)
    assert len(known) == len(paths)
    reads = []
    real = reuse.read_regular
    monkeypatch.setattr(reuse, "read_regular", lambda *a: reads.append(a[0]) or real(*a))
    again = reuse.work_files(paths, str(tmp_path), digests, known)
    assert again == first and reads == []
    # The blob ids are git's: `git hash-object` of the same bytes.
    assert first["m0.py"] == reuse.blob_id(b"X = 0\n")


def test_changed_contents_are_read_and_learned(tmp_path, monkeypatch):
    paths = tree(tmp_path)
    digests = {p: content_hash(open(p, "rb").read()) for p in paths}
    known: dict[str, str] = {}
    reuse.work_files(paths, str(tmp_path), digests, known)
    open(paths[0], "w").write("X = 100\n")
    digests[paths[0]] = content_hash(b"X = 100\n")
    reads = []
    real = reuse.read_regular
    monkeypatch.setattr(reuse, "read_regular", lambda *a: reads.append(a[0]) or real(*a))
    got = reuse.work_files(paths, str(tmp_path), digests, known)
    assert reads == [paths[0]] and got["m0.py"] == reuse.blob_id(b"X = 100\n")


def test_a_digest_that_is_not_of_the_bytes_read_is_not_learned(tmp_path):
    """A file that changed between the analysis and the hashing: its bytes name the blob, and the
    digest of other contents never gets that blob id."""
    paths = tree(tmp_path, 1)
    stale = content_hash(b"X = 'other'\n")
    known: dict[str, str] = {}
    got = reuse.work_files(paths, str(tmp_path), {paths[0]: stale}, known)
    assert known == {} and got["m0.py"] == reuse.blob_id(b"X = 0\n")
