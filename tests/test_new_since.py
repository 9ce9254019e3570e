"""`--new-since REF`: only findings whose identity REF lacks, REF read from git's objects (never
checked out, never run); `--show-fixed`; clear messages for a missing REF (shallow clones too);
and one pinned release pair of real SGLang code where the baseline and --new-since views agree."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest
from conftest import FIXTURES

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t", "GIT_CONFIG_NOSYSTEM": "1"}
HYBRID = "serving/backends/hybrid_linear_attn_backend.py"


def git(repo, *args):
    env = {**os.environ, **GIT_ENV, "HOME": str(repo.parent)}
    return subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True).stdout


def lint(cwd, *args):
    env = {**os.environ, "XDG_CACHE_HOME": str(cwd.parent / "cache"), "CI": "1"}
    return subprocess.run([sys.executable, "-m", "attn_lint", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


def report(cwd, *args):
    proc = lint(cwd, "--format", "json", "--show-latent", *args)
    assert proc.returncode in (0, 1), proc.stderr
    return proc, json.loads(proc.stdout)


@pytest.fixture
def repo(tmp_path):
    r = tmp_path / "repo"
    shutil.copytree(FIXTURES / "al001_hidden_hook", r)
    git(r, "init", "-q")
    git(r, "add", "-A")
    git(r, "commit", "-qm", "one")
    return r


def test_nothing_new_since_head(repo):
    proc, doc = report(repo, "--new-since", "HEAD", ".")
    assert proc.returncode == 0 and doc["findings"] == [] and doc["stats"]["at_revision"] == 1
    # Without --new-since the finding is there: the filter, not the analysis, removed it.
    proc, doc = report(repo, ".")
    assert proc.returncode == 1 and len(doc["findings"]) == 1


def test_the_first_commit_of_a_repository_compares_with_nothing(tmp_path):
    """A pre-commit hook comparing with HEAD runs before the repository's first commit too: HEAD
    names a branch with no commit yet, so every finding is new (before: exit 2, 'not in this
    repository')."""
    r = tmp_path / "repo"
    shutil.copytree(FIXTURES / "al001_hidden_hook", r)
    git(r, "init", "-q")
    git(r, "add", "-A")
    proc, doc = report(r, "--new-since", "HEAD", ".")
    assert proc.returncode == 1 and len(doc["findings"]) == 1, proc.stderr
    assert "HEAD has no commit yet" in proc.stderr
    changed = lint(r, "--changed-files", "--new-since", "HEAD", "--format", "concise",
                   *(str(p.relative_to(r)) for p in sorted(r.rglob("*.py"))))
    assert changed.returncode == 1 and "AL001" in changed.stdout, changed.stderr


def test_a_module_move_is_not_new_and_a_new_wrapper_is(repo):
    (repo / "serving" / "engine").mkdir()
    (repo / "serving" / "engine" / "__init__.py").touch()
    git(repo, "mv", HYBRID, "serving/engine/hybrid.py")
    for p in (repo / "serving").rglob("*.py"):
        p.write_text(p.read_text().replace("serving.backends.hybrid_linear_attn_backend", "serving.engine.hybrid"))
    proc, doc = report(repo, "--new-since", "HEAD", ".")
    assert proc.returncode == 0 and doc["findings"] == [], doc["findings"]
    moved = (repo / "serving" / "engine" / "hybrid.py")
    moved.write_text(moved.read_text() + '''

class SplitAttnBackend(AttentionBackend):
    def __init__(self, inner: AttentionBackend):
        self.inner = inner

    def forward_extend(self, q, k, v, layer, forward_batch, save_kv_cache=True):
        return self.inner.forward_extend(q, k, v, layer, forward_batch, save_kv_cache)
''')
    proc, doc = report(repo, "--new-since", "HEAD", ".")
    assert {f["class"].rsplit(".", 1)[-1] for f in doc["findings"] + doc["latent"]} == {"SplitAttnBackend"}
    assert proc.returncode == (1 if doc["findings"] else 0)  # latent ones leave the exit status alone


def test_show_fixed_lists_what_is_gone(repo):
    hybrid = repo / HYBRID
    hybrid.write_text(hybrid.read_text() + '''
    def init_mha_chunk_metadata(self, forward_batch):
        self.full_attn_backend.init_mha_chunk_metadata(forward_batch)
''')
    proc, doc = report(repo, "--new-since", "HEAD", "--show-fixed", ".")
    assert proc.returncode == 0, proc.stdout
    (gone,) = doc["fixed"]
    assert gone["member"] == "init_mha_chunk_metadata" and gone["path"] == HYBRID
    text = lint(repo, "--new-since", "HEAD", "--show-fixed", ".")
    assert "Fixed since HEAD: 1" in text.stdout and HYBRID in text.stdout


def test_show_fixed_points_into_the_repository_at_ref_and_splits_the_tiers(repo):
    """Before: the evidence of a fixed finding pointed into REF's scratch folder (deleted after
    the run), the text printed REF's line numbers on work-tree paths, and latent findings gone were
    mixed in with the others."""
    hybrid = repo / HYBRID
    hybrid.write_text("# a line that moves everything down\n" + hybrid.read_text() + '''
    def init_mha_chunk_metadata(self, forward_batch):
        self.full_attn_backend.init_mha_chunk_metadata(forward_batch)
''')
    proc, doc = report(repo, "--new-since", "HEAD", "--show-fixed", ".")
    (gone,) = doc["fixed"]
    assert all(not os.path.isabs(e["path"]) and os.path.exists(repo / e["path"]) for e in gone["evidence"]), \
        gone["evidence"]
    text = lint(repo, "--new-since", "HEAD", "--show-fixed", ".")
    assert f"HEAD:{HYBRID}:{gone['line']}:" in text.stdout  # REF's line, said to be REF's
    assert doc["stats"]["fixed_since_revision"] == 1 and doc["stats"]["fixed_latent_since_revision"] == 0


def test_show_fixed_keeps_latent_findings_apart(repo):
    latent_wrapper = '''

class QuietAttnBackend(AttentionBackend):
    def __init__(self, inner: AttentionBackend):
        self.inner = inner

    def forward_extend(self, q, k, v, layer, forward_batch, save_kv_cache=True):
        return self.inner.forward_extend(q, k, v, layer, forward_batch, save_kv_cache)
'''
    hybrid = repo / HYBRID
    before = hybrid.read_text()
    hybrid.write_text(before + latent_wrapper)
    proc, doc = report(repo, ".")
    n = sum(f["class"].endswith("QuietAttnBackend") for f in doc["latent"])
    assert n == 3 and not any(f["class"].endswith("QuietAttnBackend") for f in doc["findings"])
    git(repo, "commit", "-qam", "latent")
    hybrid.write_text(before)
    plain = lint(repo, "--new-since", "HEAD", "--show-fixed", ".")
    assert "Fixed since HEAD: 0 (and 3 latent: --show-latent lists them)" in plain.stdout, plain.stdout
    assert "QuietAttnBackend" not in plain.stdout
    shown = lint(repo, "--new-since", "HEAD", "--show-fixed", "--show-latent", ".")
    assert "Fixed since HEAD: 0 (and 3 latent)" in shown.stdout and "QuietAttnBackend" in shown.stdout


def test_the_revision_is_read_not_checked_out_or_run(repo, tmp_path):
    marker = tmp_path / "ran"
    (repo / "serving" / "side_effect.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\n")
    (repo / "serving" / "link.py").symlink_to("/etc/passwd")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "two")
    (repo / HYBRID).write_text((repo / HYBRID).read_text() + "\n# edited, not committed\n")
    status = git(repo, "status", "--porcelain")
    listing = sorted(str(p) for p in repo.rglob("*"))
    # (The work tree's own link is a file error of the current run: --ignore-file-errors.)
    proc = lint(repo, "--new-since", "HEAD", "--ignore-file-errors", ".")
    assert proc.returncode == 0, proc.stderr
    assert not marker.exists()
    assert "left out serving/link.py (not a plain file at HEAD: mode 120000)" in proc.stderr
    assert git(repo, "status", "--porcelain") == status
    assert sorted(str(p) for p in repo.rglob("*")) == listing
    assert "edited, not committed" in (repo / HYBRID).read_text()


def test_a_missing_revision_is_a_clear_error(repo, tmp_path):
    proc = lint(repo, "--new-since", "no-such-branch", ".")
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines()[-1] == (
        "attn-lint: --new-since: revision 'no-such-branch' is not in this repository. Fetch it first "
        "(git fetch origin no-such-branch).")
    assert lint(repo, "--show-fixed", ".").returncode == 2  # --show-fixed needs --new-since
    assert lint(repo, "--new-since", "--upload-pack=x", ".").returncode == 2
    outside = tmp_path / "plain"
    shutil.copytree(FIXTURES / "al001_hidden_hook", outside)
    proc = lint(outside, "--new-since", "HEAD", ".")
    assert proc.returncode == 2 and "is not in a git work tree" in proc.stderr


def test_a_shallow_clone_works_for_what_it_has(repo, tmp_path):
    (repo / "serving" / "extra.py").write_text("X = 1\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "two")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--depth=1", f"file://{repo}", str(clone))
    proc, doc = report(clone, "--new-since", "HEAD", ".")
    assert proc.returncode == 0 and doc["stats"]["at_revision"] == 1
    proc = lint(clone, "--new-since", "HEAD~1", ".")
    assert proc.returncode == 2 and "shallow clone" in proc.stderr and "git fetch --depth=1" in proc.stderr


# --- one release pair of real code: the baseline and --new-since views agree -------------------
PAIR = ("0.5.15", "0.5.16")
# Read by hand: the findings of sglang/srt 0.5.16 whose subject is new since 0.5.15.
NEW_IN_0_5_16 = {
    ("AL001", "HybridAttnBackend", "max_context_len"),
    ("AL003", "HybridAttnBackend", "draft_extend_metadata_captured_in_graph"),
    ("AL003", "HybridLinearAttnBackend", "draft_extend_metadata_captured_in_graph"),
    ("AL003", "MiniMaxHybridAttnBackend", "draft_extend_metadata_captured_in_graph"),
    ("AL003", "MiniMaxHybridAttnBackend", "get_indexer_metadata"),
    ("AL003", "MiniMaxHybridAttnBackend", "update_verify_buffers_to_fill_after_draft"),
    ("AL003", "TboAttnBackend", "draft_extend_metadata_captured_in_graph"),
}


@pytest.mark.network
def test_release_pair_new_findings_are_the_new_identities(tmp_path):
    from precision_labels import release_tree
    try:
        old, new = (release_tree("sglang", v) for v in PAIR)
    except RuntimeError as exc:
        pytest.skip(str(exc))

    def key(f):
        return f["code"], f["class"].rsplit(".", 1)[-1], f["member"]

    repo = tmp_path / "repo"
    shutil.copytree(old / "sglang" / "srt", repo / "sglang" / "srt")
    (repo / "sglang" / "__init__.py").touch()
    assert lint(repo, "--write-baseline", str(tmp_path / "b.json"), "sglang/srt").returncode == 0
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", PAIR[0])
    shutil.rmtree(repo / "sglang" / "srt")
    shutil.copytree(new / "sglang" / "srt", repo / "sglang" / "srt")
    _, by_baseline = report(repo, "--baseline", str(tmp_path / "b.json"), "sglang/srt")
    _, by_revision = report(repo, "--new-since", "HEAD", "sglang/srt")
    for doc in (by_baseline, by_revision):
        assert {key(f) for f in doc["findings"]} == NEW_IN_0_5_16


def test_a_revision_with_braces_and_a_file_too_large_to_read(repo):
    """`HEAD@{1}` is the user's text, never a format string; a blob larger than the engine reads is
    left out by its size, with a note, before anything is loaded."""
    from attn_lint.linter.files.discover import MAX_FILE_BYTES
    (repo / "serving" / "huge.py").write_bytes(b"#" * (MAX_FILE_BYTES + 1) + b"\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "two")
    proc = lint(repo, "--new-since", "HEAD@{1}", "--ignore-file-errors", ".")
    assert proc.returncode == 0, proc.stderr
    assert "already at HEAD@{1}" in proc.stderr
    proc = lint(repo, "--new-since", "HEAD", "--ignore-file-errors", ".")
    assert f"left out serving/huge.py (larger than {MAX_FILE_BYTES} bytes)" in proc.stderr


def test_a_revision_a_run_already_analysed_is_served_from_the_cache(repo):
    """The pre-commit flow: the hook run on the staged content keeps its findings under that
    content; once committed, the next hook's `--new-since HEAD` is that very content, read from
    `git ls-tree` only (no snapshot, no second analysis), and says the same as the snapshot does."""
    hybrid = repo / HYBRID
    hybrid.write_text(hybrid.read_text() + "\n# one\n")
    proc, first = report(repo, "--new-since", "HEAD", ".")
    assert first["stats"]["revision_served_from_cache"] is False  # HEAD's contents were never analysed
    git(repo, "commit", "-qam", "two")
    hybrid.write_text(hybrid.read_text() + "# two\n")
    proc, served = report(repo, "--new-since", "HEAD", ".")
    assert served["stats"]["revision_served_from_cache"] is True, proc.stderr
    proc, read = report(repo, "--no-cache", "--new-since", "HEAD", ".")
    assert read["stats"]["revision_served_from_cache"] is False
    # The time the run prints counts REF's analysis too.
    assert 0 < read["stats"]["revision_seconds"] <= read["stats"]["seconds"]
    assert (served["findings"], served["stats"]["at_revision"]) == (read["findings"], read["stats"]["at_revision"])


def test_a_revision_whose_configuration_differs_is_read_again(repo):
    (repo / "pyproject.toml").write_text('[tool.attn-lint]\nselect = ["AL001"]\n')
    report(repo, "--new-since", "HEAD", ".")  # keeps the findings under this configuration
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "configured")
    (repo / "pyproject.toml").write_text('[tool.attn-lint]\nselect = ["AL001", "AL003"]\n')
    proc, doc = report(repo, "--new-since", "HEAD", ".")
    assert doc["stats"]["revision_served_from_cache"] is False, proc.stderr
