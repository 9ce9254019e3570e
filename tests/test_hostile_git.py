"""`--new-since REF` on a hostile repository: reading a revision runs nothing and reads nothing
but objects and refs.

Each test plants what a pull request (plain files) or a checkout from an archive (a `.git` of its
own) could plant, then runs the installed command line as the documented CI gate does. A marker
file stands for the command the repository wants run. Before the private GIT_DIR, the first two
ran their command (the first on git before 2.38, which ignores `safe.bareRepository`: the shim
below stands for it on a newer git), the expansion test took gigabytes, and the gitfile was
followed out of the project.
"""

from __future__ import annotations

import os
import resource
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import write_tree
from small_trees import TREES

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t", "GIT_CONFIG_NOSYSTEM": "1"}
REAL_GIT = shutil.which("git")
# git before 2.38 knows no safe.bareRepository: the `-c` pair asking for it does nothing.
OLD_GIT = f"""#!/bin/sh
pending=0
for a in "$@"; do
  shift
  if [ "$pending" = 1 ]; then
    pending=0
    case "$a" in safe.bareRepository=*) ;; *) set -- "$@" -c "$a" ;; esac
    continue
  fi
  if [ "$a" = "-c" ]; then pending=1; continue; fi
  set -- "$@" "$a"
done
exec {REAL_GIT} "$@"
"""


def git(repo: Path, *args: str, env: dict | None = None) -> str:
    full = {**os.environ, **GIT_ENV, "HOME": str(repo.parent), **(env or {})}
    return subprocess.run(["git", *args], cwd=repo, env=full, check=True, capture_output=True, text=True).stdout


def lint(cwd: Path, *args: str, path_prefix: str | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "ATTN_LINT_CACHE_KEY"}
    env.update(XDG_CACHE_HOME=str(cwd.parent / "cache"), HOME=str(cwd.parent / "home"), CI="1", NO_COLOR="1")
    if path_prefix:
        env["PATH"] = path_prefix + os.pathsep + env["PATH"]
    return subprocess.run([sys.executable, "-m", "attn_lint", "--no-server", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)


@pytest.fixture
def repo(tmp_path) -> Path:
    r = write_tree(tmp_path / "repo", {f"src/{k}": v for k, v in TREES["AL001"].items()})
    git(r, "init", "-q", "-b", "main")
    git(r, "add", "-A")
    git(r, "commit", "-qm", "one")
    git(r, "update-ref", "refs/remotes/origin/main", "HEAD")
    return r


def _missing_blob_commit(git_dir: Path, env: dict, under: str = "") -> str:
    """A commit whose tree names a blob the repository lacks (what a partial clone would fetch)."""
    def run(*args, data=None):
        return subprocess.run(["git", f"--git-dir={git_dir}", *args], input=data, env={**os.environ, **GIT_ENV, **env},
                              check=True, capture_output=True, text=True).stdout.strip()
    leaf = run("mktree", "--missing", data="100644 blob 1111111111111111111111111111111111111111\tbackends.py\n")
    top = run("mktree", "--missing", data=f"040000 tree {leaf}\tserving\n")
    if under:
        top = run("mktree", "--missing", data=f"040000 tree {top}\t{under}\n")
    return run("commit-tree", top, "-m", "x")


def _partial_clone_config(marker: Path, extra: str = "") -> str:
    return f"""[core]
\trepositoryformatversion = 1
\tbare = false
\tworktree = .
\tsshCommand = touch {marker}; false
{extra}[extensions]
\tpartialClone = origin
[remote "origin"]
\turl = ssh://example.invalid/x
\tpromisor = true
[protocol "ssh"]
\tallow = always
"""


def test_a_repository_planted_in_the_analysed_folder_is_never_used(repo, tmp_path):
    """Attack 1: a pull request of plain files adds a [tool.attn-lint] table and a repository's
    files to src/; git would discover that repository from src/ and lazily fetch through it."""
    marker = tmp_path / "ran"
    src = repo / "src"
    git(tmp_path, "init", "-q", "--bare", str(tmp_path / "planted"))
    for entry in (tmp_path / "planted").iterdir():
        shutil.move(str(entry), src / entry.name)
    commit = _missing_blob_commit(src, {"HOME": str(tmp_path)})
    subprocess.run(["git", f"--git-dir={src}", "update-ref", "refs/remotes/origin/main", commit], check=True)
    (src / "config").write_text(_partial_clone_config(marker))
    (src / "pyproject.toml").write_text("[tool.attn-lint]\n")
    shim = tmp_path / "old-git"
    shim.mkdir()
    (shim / "git").write_text(OLD_GIT)
    (shim / "git").chmod(0o755)
    proc = lint(repo, "--format", "json", "--new-since", "origin/main", "src", path_prefix=str(shim))
    assert not marker.exists()
    assert proc.returncode == 0, proc.stderr  # the real repository's origin/main: the finding is not new
    assert '"at_revision": 1' in proc.stdout


def test_a_hostile_git_config_runs_nothing_on_any_git(repo, tmp_path):
    """Attack 2: a checkout from an archive brings its own .git/config: a partial clone whose
    promisor remote runs core.sshCommand, with ssh allowed over `protocol.allow=never`."""
    marker = tmp_path / "ran"
    commit = _missing_blob_commit(repo / ".git", {"HOME": str(tmp_path)}, under="src")
    git(repo, "update-ref", "refs/remotes/origin/main", commit)
    (repo / ".git" / "config").write_text(_partial_clone_config(marker).replace("\tworktree = .\n", ""))
    proc = lint(repo, "--new-since", "origin/main", "src")
    assert not marker.exists()
    assert proc.returncode in (0, 1), proc.stderr
    assert "src/serving/backends.py (object 111111111111 is missing from the repository" in proc.stderr.replace(
        "--new-since: left out ", "")


@pytest.mark.parametrize("setting", [
    "core.fsmonitor", "core.hooksPath", "filter.x.smudge", "diff.x.textconv", "core.pager", "core.askPass",
    "gpg.program", "core.alternateRefsCommand", "uploadpack.packObjectsHook", "core.sshCommand",
])
def test_no_repository_setting_is_run(repo, tmp_path, setting):
    marker = tmp_path / "ran"
    command = f"sh -c 'touch {marker}'"
    value = str(tmp_path / "hooks") if setting == "core.hooksPath" else command
    if setting == "core.hooksPath":
        (tmp_path / "hooks").mkdir()
        for hook in ("post-checkout", "reference-transaction", "post-index-change"):
            (tmp_path / "hooks" / hook).write_text(f"#!/bin/sh\ntouch {marker}\n")
            (tmp_path / "hooks" / hook).chmod(0o755)
    git(repo, "config", setting, value)
    (repo / ".gitattributes").write_text("*.py filter=x diff=x\n")
    proc = lint(repo, "--new-since", "HEAD", "src")
    assert proc.returncode in (0, 1), proc.stderr
    assert not marker.exists()


def test_an_include_of_a_fifo_in_the_repository_config_never_blocks(repo, tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with open(repo / ".git" / "config", "a") as fh:
        fh.write(f"[include]\n\tpath = {fifo}\n")
    proc = lint(repo, "--new-since", "HEAD", "src", timeout=60)
    assert proc.returncode == 0, proc.stderr


def test_a_repository_config_cannot_start_a_daemon(repo, tmp_path):
    """`server = true` in a repository's own configuration would leave a process running after the
    run; only the user's flag starts one."""
    (repo / "pyproject.toml").write_text("[tool.attn-lint]\nserver = true\n")
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "ATTN_LINT_CACHE_KEY")}
    env.update(XDG_CACHE_HOME=str(tmp_path / "cache"), NO_COLOR="1")
    proc = subprocess.run([sys.executable, "-m", "attn_lint", "src"], cwd=repo, env=env, capture_output=True,
                          text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert proc.returncode == 1, proc.stderr
    assert "does not start the server" in proc.stderr
    status = subprocess.run([sys.executable, "-m", "attn_lint", "server", "status"], cwd=repo, env=env,
                            capture_output=True, text=True, timeout=60)
    assert "no server" in (status.stdout + status.stderr).lower(), status.stdout + status.stderr


def test_a_gitfile_leading_out_of_the_work_tree_is_refused(repo, tmp_path):
    other = tmp_path / "other"
    shutil.move(str(repo / ".git"), other)
    (repo / ".git").write_text(f"gitdir: {other}\n")
    proc = lint(repo, "--new-since", "HEAD", "src")
    assert proc.returncode == 2
    assert "outside the repository's folder" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_a_gitfile_inside_the_work_tree_is_read(repo):
    shutil.move(str(repo / ".git"), repo / ".git-data")
    (repo / ".git").write_text("gitdir: .git-data\n")
    proc = lint(repo, "--format", "json", "--new-since", "HEAD", "src")
    assert proc.returncode == 0, proc.stderr
    assert '"at_revision": 1' in proc.stdout


def test_a_ref_naming_a_blob_is_called_a_blob(repo):
    git(repo, "tag", "notes", "HEAD:src/serving/model.py")
    proc = lint(repo, "--new-since", "notes", "src")
    assert proc.returncode == 2
    assert "revision 'notes' names a blob, not a commit" in proc.stderr


def test_the_fetch_line_the_message_gives_makes_the_revision_readable(tmp_path, repo):
    """A shallow clone of a pull request's branch has no origin/main; the message's command, run as
    written, fetches it where --new-since looks."""
    git(repo, "checkout", "-qb", "feature")
    (repo / "src" / "serving" / "extra.py").write_text("X = 1\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "two")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--depth", "1", "--branch", "feature", f"file://{repo}", str(clone))
    proc = lint(clone, "--new-since", "origin/main", "src")
    assert proc.returncode == 2
    line = proc.stderr.strip().splitlines()[-1]
    command = line.split("fetch the revision first (", 1)[1].rsplit(").", 1)[0]
    assert command == "git fetch --depth=1 origin main:refs/remotes/origin/main"
    git(clone, *command.split()[1:])
    proc = lint(clone, "--new-since", "origin/main", "src")
    assert proc.returncode == 0, proc.stderr
    assert "not shown: 1 already at origin/main" in proc.stderr


def _peak_child_rss() -> int:
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024


@pytest.mark.skipif(sys.platform != "linux", reason="ru_maxrss in kB is Linux's")
def test_one_large_blob_at_many_paths_does_not_expand(tmp_path):
    """Attack 5: 160 paths of one 8 MB blob are a few hundred kB of repository; the revision must
    not be held in memory whole or written out 160 times, and the analysis parses it once."""
    from attn_lint.linter.files.discover import MAX_FILE_BYTES
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    line = b"# " + b"x" * 77 + b"\n"
    (repo / "big.py").write_bytes(line * ((MAX_FILE_BYTES - 1024) // len(line)))
    blob = git(repo, "hash-object", "-w", "big.py").strip()
    (repo / "big.py").unlink()
    tree = subprocess.run(["git", "mktree"], cwd=repo, input="".join(f"100644 blob {blob}\tm{n}.py\n" for n in range(160)),
                          check=True, capture_output=True, text=True, env={**os.environ, **GIT_ENV}).stdout.strip()
    commit = subprocess.run(["git", "commit-tree", tree, "-m", "x"], cwd=repo, check=True, capture_output=True,
                            text=True, env={**os.environ, **GIT_ENV}).stdout.strip()
    git(repo, "update-ref", "refs/heads/main", commit)
    (repo / "empty.py").write_text("")
    code = ("import resource, subprocess, sys\n"
            f"p = subprocess.run({[sys.executable, '-m', 'attn_lint', '--no-server', '--no-cache', '--new-since', 'main', '.']!r})\n"
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n")
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), "CI": "1", "TMPDIR": str(tmp_path)}
    proc = subprocess.run([sys.executable, "-c", code], cwd=repo, env=env, capture_output=True, text=True, timeout=300)
    peak = int(proc.stdout.strip().splitlines()[-1]) * 1024
    assert peak < 600 * 2**20, f"{peak / 2**20:.0f} MiB resident"


def test_a_revision_past_the_file_bound_is_one_line(tmp_path):
    """168 kB of repository can list 200,000 paths; past the bound the run says so and stops."""
    from attn_lint.linter.files.revision import MAX_SNAPSHOT_FILES
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    blob = subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=repo, input="X = 1\n", check=True,
                          capture_output=True, text=True).stdout.strip()
    n = MAX_SNAPSHOT_FILES + 1
    leaf = subprocess.run(["git", "mktree"], cwd=repo, input="".join(f"100644 blob {blob}\tm{i}.py\n" for i in range(n)),
                          check=True, capture_output=True, text=True).stdout.strip()
    commit = subprocess.run(["git", "commit-tree", leaf, "-m", "x"], cwd=repo, check=True, capture_output=True,
                            text=True, env={**os.environ, **GIT_ENV}).stdout.strip()
    git(repo, "update-ref", "refs/heads/main", commit)
    (repo / "a.py").write_text("")
    tmp = tmp_path / "scratch"
    tmp.mkdir()
    env_tmp = {"TMPDIR": str(tmp)}
    proc = subprocess.run([sys.executable, "-m", "attn_lint", "--no-server", "--new-since", "main", "."], cwd=repo,
                          env={**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), "CI": "1", **env_tmp},
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2
    assert f"more Python under the analysed paths than --new-since reads ({MAX_SNAPSHOT_FILES} files" in proc.stderr
    assert list(tmp.iterdir()) == []  # nothing written, nothing left


def test_the_private_git_folder_and_the_snapshot_are_removed(repo, tmp_path):
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "ATTN_LINT_CACHE_KEY"}
    env.update(XDG_CACHE_HOME=str(tmp_path / "cache"), CI="1", TMPDIR=str(scratch))
    proc = subprocess.run([sys.executable, "-m", "attn_lint", "--no-server", "--new-since", "HEAD", "src"], cwd=repo,
                          env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert list(scratch.iterdir()) == []
    assert stat.S_ISDIR(os.lstat(repo / ".git").st_mode)


def test_a_change_that_edits_its_own_configuration_to_hide_drift_is_named(repo):
    """A pull request may edit its own [tool.attn-lint]; what that hides, REF's configuration would
    show, and the `not shown:` line says so."""
    (repo / "pyproject.toml").write_text("[tool.attn-lint]\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "config")
    backends = repo / "src" / "serving" / "backends.py"
    backends.write_text(backends.read_text() + '''

class SplitBackend(Backend):
    def __init__(self, inner: Backend):
        self.inner = inner

    def forward(self, batch):
        return self.inner.forward(batch)
''')
    shown = lint(repo, "--new-since", "HEAD", "src")
    assert shown.returncode == 1 and "SplitBackend" in shown.stdout
    (repo / "pyproject.toml").write_text('[tool.attn-lint]\nexclude = ["src/serving/backends.py"]\n')
    hidden = lint(repo, "--new-since", "HEAD", "src")
    assert hidden.returncode == 0, hidden.stdout
    assert "1 hidden by configuration changed since HEAD (its configuration shows them)" in hidden.stderr
    unchanged = lint(repo, "--new-since", "HEAD", "--config", "pyproject.toml", "src")
    assert "hidden by configuration" not in unchanged.stderr  # a file named by the user is theirs


def test_ref_folders_that_are_links_out_of_the_repository_are_never_read(repo, tmp_path):
    """`.git/logs` or `.git/refs/tags` leading out of the repository: the private GIT_DIR copies
    nothing from there (a file named like a ref, read there, would be someone else's)."""
    from attn_lint.linter.files import revision
    outside = tmp_path / "outside"
    (outside / "logs").mkdir(parents=True)
    (outside / "logs" / "HEAD").write_text("secret of the user's\n")
    (outside / "tags").mkdir()
    (outside / "tags" / "leak").write_text("secret of the user's\n")
    shutil.rmtree(repo / ".git" / "logs")
    (repo / ".git" / "logs").symlink_to(outside / "logs")
    shutil.rmtree(repo / ".git" / "refs" / "tags", ignore_errors=True)
    (repo / ".git" / "refs" / "tags").symlink_to(outside / "tags")
    private = revision._private_git_dir(revision.find_repository(str(repo)))
    try:
        copied = [p.read_text() for p in Path(private).rglob("*") if p.is_file()]
        assert not any("secret" in text for text in copied), copied
        assert (Path(private) / "refs" / "heads" / "main").is_file()  # the repository's own refs are there
    finally:
        shutil.rmtree(private)
