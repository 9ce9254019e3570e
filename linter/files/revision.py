"""The tree at a git revision, for `--new-since REF`: read from git's objects, never checked out.

A repository can be hostile (a pull request's files, a checkout unpacked from an archive), so git
never reads anything of it but objects and refs:

* attn-lint finds the repository itself: the nearest `.git` above the project, a folder or a
  gitfile whose target lies inside the work tree. git never *discovers* a repository (a bare one
  planted in a pull request's folder would be found first), and a `.git` leading elsewhere is
  refused.
* git runs against a private `GIT_DIR` that attn-lint writes: its own two-line config, copies of
  the refs (and reflogs), and `objects/info/alternates` naming the repository's object folder.
  The repository's config, hooks, remotes, promisors and attributes are never read, so nothing
  in them can run a command, fetch (a partial clone's lazy fetch runs `core.sshCommand`), start
  a daemon or open a FIFO. The user's and the system's git config are not read either.
* what git hands over is streamed under bounds: files, bytes and refs; an object the repository
  lacks is reported missing, never fetched.

`git ls-tree` lists the Python files under the analysed paths at REF and `git cat-file --batch`
hands over their bytes, one object at a time; each distinct blob is written once to a private
scratch folder (mode 0700, removed after the run) that mirrors the repository's layout, and other
paths holding it are hard links to it. Module names, display paths and exclusions are then those
of the work tree, and the summaries of unchanged files come from the cache (keyed by content).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import stat
import subprocess
import tempfile
import threading
from dataclasses import dataclass, field

from ..userfiles import within
from .discover import MAX_FILE_BYTES

GIT_TIMEOUT = 300  # seconds for one git command (listing or reading a large tree)
# A revision's Python files: far above a real tree (the whole sglang package: 4,719 files,
# 80 MB); a repository of a few hundred kB can otherwise expand into millions of scratch files
# or gigabytes (one large blob at many paths).
MAX_SNAPSHOT_FILES = 50_000
MAX_SNAPSHOT_BYTES = 1 << 30
MAX_REF_BYTES = 64 << 20  # refs, packed-refs and reflogs copied into the private GIT_DIR
MAX_REF_FILES = 100_000
_SMALL = 1 << 20  # HEAD, a gitfile, the repository's config (read for its object format only)
_PLAIN_MODES = ("100644", "100755")
_SAFE_GIT = ("git", "--no-pager", "-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null",
             "-c", "protocol.allow=never", "-c", "core.untrackedCache=false")


class RevisionError(Exception):
    """A one-line reason the revision cannot be read (not a git work tree, REF missing...)."""


@dataclass(frozen=True)
class Repository:
    """A repository attn-lint found itself: the folder holding `.git`, its own git folder (HEAD,
    reflog) and the common one (objects, refs; the same but for a worktree)."""

    work_tree: str
    git_dir: str
    common_dir: str


@dataclass
class Snapshot:
    """The Python files of `paths` at one commit, written under `folder`."""

    ref: str
    commit: str
    folder: str
    paths: list[str]  # the analysed paths, as they lie in the snapshot
    files: int = 0
    left_out: list[str] = field(default_factory=list)  # 'path (why)' for entries not written
    extra: dict[str, bytes] = field(default_factory=dict)  # repository path -> bytes (asked by name)

    def remove(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)


# --- finding the repository, without git -------------------------------------------------------

def find_repository(start: str) -> Repository:
    """The repository whose work tree holds `start`: the nearest folder above it with a `.git`."""
    here = os.path.realpath(start)
    if not os.path.isdir(here):
        here = os.path.dirname(here)
    current = here
    while True:
        if os.path.lexists(os.path.join(current, ".git")):
            return _repository_at(current)
        parent = os.path.dirname(current)
        if parent == current:
            raise RevisionError(f"{start} is not in a git work tree (no .git folder above it)")
        current = parent


def _repository_at(top: str) -> Repository:
    dotgit = os.path.join(top, ".git")
    st = os.lstat(dotgit)
    if stat.S_ISLNK(st.st_mode) or stat.S_ISDIR(st.st_mode):
        git_dir = _inside(top, os.path.realpath(dotgit), f"{dotgit} is a link")
        if not os.path.isdir(git_dir):
            raise RevisionError(f"{dotgit} is not a git folder")
    elif stat.S_ISREG(st.st_mode):
        text = _read_small(dotgit).decode("utf-8", "replace").strip()
        if not text.startswith("gitdir:") or "\n" in text:
            raise RevisionError(f"{dotgit} is neither a git folder nor a gitfile")
        target = os.path.join(top, text[len("gitdir:"):].strip())
        git_dir = _inside(top, os.path.realpath(target), f"{dotgit} is a gitfile")
    else:
        raise RevisionError(f"{dotgit} is neither a git folder nor a gitfile")
    common = git_dir
    if os.path.lexists(os.path.join(git_dir, "commondir")):
        where = _read_small(os.path.join(git_dir, "commondir")).decode("utf-8", "replace").strip()
        common = _inside(top, os.path.realpath(os.path.join(git_dir, where)), f"{git_dir}/commondir")
    objects = os.path.join(common, "objects")
    _inside(top, os.path.realpath(objects), f"{objects} is a link")
    if not os.path.isdir(objects):
        raise RevisionError(f"{common} holds no objects folder: not a git repository")
    return Repository(top, git_dir, common)


def _inside(top: str, real: str, what: str) -> str:
    if not within(real, os.path.realpath(top)):
        raise RevisionError(f"{what} leading to {real}, outside the repository's folder {top}: --new-since reads "
                            "only a repository inside the work tree (lint a worktree or a submodule from the "
                            "repository that holds its objects)")
    return real


def _read_small(path: str, limit: int = _SMALL) -> bytes:
    """A regular file's bytes, never through a link and never waiting on a FIFO."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise RevisionError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > limit:
            raise RevisionError(f"cannot read {path}: not a regular file of at most {limit} bytes")
        data = os.read(fd, limit + 1)
        if len(data) > limit:
            raise RevisionError(f"cannot read {path}: larger than {limit} bytes")
        return data
    finally:
        os.close(fd)


# --- the private GIT_DIR ----------------------------------------------------------------------

class _Budget:
    def __init__(self) -> None:
        self.bytes = MAX_REF_BYTES
        self.files = MAX_REF_FILES

    def take(self, size: int) -> bool:
        self.bytes -= size
        self.files -= 1
        return self.bytes >= 0 and self.files >= 0


def _private_git_dir(repo: Repository) -> str:
    """A GIT_DIR of attn-lint's own that reads the repository's objects and refs and nothing else."""
    private = tempfile.mkdtemp(prefix="attn-lint-git-")
    try:
        config = _read_config_text(repo.common_dir)
        if re.search(r"^\s*refstorage\s*=\s*reftable\s*$", config, re.M | re.I):
            raise RevisionError("the repository keeps its refs in the reftable format, which --new-since "
                                "does not read")
        sha256 = re.search(r"^\s*objectformat\s*=\s*sha256\s*$", config, re.M | re.I) is not None
        with open(os.path.join(private, "config"), "w") as fh:
            fh.write(f"[core]\n\trepositoryformatversion = {1 if sha256 else 0}\n\tbare = true\n")
            if sha256:
                fh.write("[extensions]\n\tobjectformat = sha256\n")
        os.makedirs(os.path.join(private, "objects", "info"))
        with open(os.path.join(private, "objects", "info", "alternates"), "w") as fh:
            fh.write(os.path.realpath(os.path.join(repo.common_dir, "objects")) + "\n")
        budget = _Budget()
        for name in ("HEAD", "FETCH_HEAD", "ORIG_HEAD"):
            _copy_file(os.path.join(repo.git_dir, name), os.path.join(private, name), budget)
        if not os.path.exists(os.path.join(private, "HEAD")):
            with open(os.path.join(private, "HEAD"), "w") as fh:
                fh.write("ref: refs/heads/main\n")
        for name in ("packed-refs", "shallow"):
            _copy_file(os.path.join(repo.common_dir, name), os.path.join(private, name), budget)
        _copy_tree(os.path.join(repo.common_dir, "refs"), os.path.join(private, "refs"), budget)
        os.makedirs(os.path.join(private, "refs"), exist_ok=True)  # a new repository may have none yet
        # Reflogs (`HEAD@{1}`) are a convenience: past the budget they are left out, not an error.
        logs = _Budget()
        _copy_file(os.path.join(repo.git_dir, "logs", "HEAD"), os.path.join(private, "logs", "HEAD"), logs)
        _copy_tree(os.path.join(repo.common_dir, "logs", "refs"), os.path.join(private, "logs", "refs"), logs,
                   strict=False)
        return private
    except BaseException:
        shutil.rmtree(private, ignore_errors=True)
        raise


def _read_config_text(common: str) -> str:
    """The repository's config as text, only to learn its object and ref formats; nothing in it
    is ever handed to git."""
    try:
        return _read_small(os.path.join(common, "config")).decode("utf-8", "replace")
    except RevisionError:
        return ""


def _linked(folder: str) -> bool:
    """Whether a folder below the (resolved) git folder is reached through a link: `.git/logs` or
    `.git/refs` leading out of the repository is never read."""
    return os.path.realpath(folder) != folder


def _copy_file(src: str, dst: str, budget: _Budget, strict: bool = True) -> None:
    if not _linked(os.path.dirname(src)):
        _copy(src, dst, budget, strict)


def _copy(src: str, dst: str, budget: _Budget, strict: bool) -> None:
    try:
        data = _read_small(src, MAX_REF_BYTES)
    except RevisionError:
        return  # absent, a link, a FIFO: a ref git would not have either
    if not budget.take(len(data)):
        if strict:
            raise RevisionError(f"the repository has more refs than --new-since reads ({MAX_REF_FILES} files, "
                                f"{MAX_REF_BYTES >> 20} MB)")
        return
    os.makedirs(os.path.dirname(dst), mode=0o700, exist_ok=True)
    with open(dst, "wb") as fh:
        fh.write(data)


def _copy_tree(src: str, dst: str, budget: _Budget, strict: bool = True) -> None:
    """Regular files under `src`, links never followed."""
    todo = [] if _linked(src) else [(src, dst)]
    while todo:
        folder, target = todo.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            if entry.is_symlink():
                continue
            if entry.is_dir(follow_symlinks=False):
                todo.append((entry.path, os.path.join(target, entry.name)))
            elif entry.is_file(follow_symlinks=False):
                _copy(entry.path, os.path.join(target, entry.name), budget, strict)


# --- running git ------------------------------------------------------------------------------

def _env(private: str) -> dict[str, str]:
    """Nothing of the caller's git environment, config or home: git sees the private GIT_DIR only."""
    return {"PATH": os.environ.get("PATH", os.defpath), "HOME": private, "XDG_CONFIG_HOME": private,
            "GIT_DIR": private, "GIT_CEILING_DIRECTORIES": private, "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_SYSTEM": os.devnull, "GIT_ATTR_NOSYSTEM": "1",
            "GIT_NO_LAZY_FETCH": "1", "GIT_ALLOW_PROTOCOL": "", "GIT_PROTOCOL_FROM_USER": "0",
            "GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0", "GIT_NO_REPLACE_OBJECTS": "1", "LC_ALL": "C"}


class _Git:
    def __init__(self, repo: Repository):
        self.repo = repo
        self.dir = _private_git_dir(repo)
        self.env = _env(self.dir)

    def close(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)

    def run(self, args: list[str]) -> bytes:
        try:
            proc = subprocess.run([*_SAFE_GIT, *args], cwd=self.dir, capture_output=True, env=self.env,
                                  stdin=subprocess.DEVNULL, timeout=GIT_TIMEOUT, check=False)
        except FileNotFoundError:
            raise RevisionError("git is not installed (--new-since reads the revision from git)") from None
        except subprocess.TimeoutExpired:
            raise RevisionError(f"git {args[0]} took more than {GIT_TIMEOUT} s") from None
        if proc.returncode != 0:
            message = proc.stderr.decode("utf-8", "replace").strip().splitlines()
            raise RevisionError(message[-1] if message else f"git {args[0]} failed")
        return proc.stdout

    def stream(self, args: list[str]) -> subprocess.Popen:
        try:
            proc = subprocess.Popen([*_SAFE_GIT, *args], cwd=self.dir, env=self.env, stdin=subprocess.PIPE,
                                    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        except FileNotFoundError:
            raise RevisionError("git is not installed (--new-since reads the revision from git)") from None
        timer = threading.Timer(GIT_TIMEOUT, proc.kill)
        timer.daemon = True
        timer.start()
        proc.timer = timer  # type: ignore[attr-defined]
        return proc


def _finish(proc: subprocess.Popen) -> None:
    proc.timer.cancel()  # type: ignore[attr-defined]
    for pipe in (proc.stdin, proc.stdout):
        try:
            if pipe is not None:
                pipe.close()
        except OSError:
            pass
    proc.kill()
    proc.wait()


def repository_root(start: str) -> str:
    return find_repository(start).work_tree


def resolve_commit(ref: str, git: _Git) -> str:
    if not ref or ref.startswith("-") or "\0" in ref or "\n" in ref:
        raise RevisionError(f"{ref!r} is not a revision")
    commit = _rev_parse(git, f"{ref}^{{commit}}")
    if commit:
        return commit
    named = _rev_parse(git, ref)
    if named:
        try:
            kind = git.run(["cat-file", "-t", named]).decode("ascii", "replace").strip()
        except RevisionError:
            kind = ""
        if kind and kind != "commit":
            raise RevisionError(f"revision {ref!r} names a {kind}, not a commit: give a branch, a tag of a commit "
                                "or a commit")
    shallow = os.path.exists(os.path.join(git.dir, "shallow"))
    command = fetch_command(ref, shallow)
    hint = (f" This is a shallow clone: fetch the revision first ({command})." if shallow
            else f" Fetch it first ({command}).")
    raise RevisionError(f"revision {ref!r} is not in this repository.{hint}")


def fetch_command(ref: str, shallow: bool = False) -> str:
    """The git command that makes `ref` readable here. A remote-tracking name (`origin/main`) needs
    its destination spelled out: a single-branch or shallow clone's fetch of `main` alone updates
    only FETCH_HEAD, and `origin/main` would still be missing."""
    depth = "--depth=1 " if shallow else ""
    remote, _, branch = ref.partition("/")
    if branch and not ref.startswith("refs/") and re.fullmatch(r"[\w.-]+", remote) and \
            re.fullmatch(r"[\w./-]+", branch) and ".." not in branch:
        return f"git fetch {depth}{remote} {branch}:refs/remotes/{remote}/{branch}"
    return f"git fetch {depth}origin {ref}"


def _unborn(git: _Git) -> bool:
    """HEAD names a branch with no commit, and the repository has no ref at all (a new repository)."""
    if _rev_parse(git, "HEAD"):
        return False
    try:
        return not git.run(["for-each-ref", "--count=1"]).strip()
    except RevisionError:
        return False


def _rev_parse(git: _Git, spec: str) -> str:
    try:
        out = git.run(["rev-parse", "--verify", "--quiet", "--end-of-options", spec])
    except RevisionError:
        return ""
    return out.decode("ascii", "replace").strip()


# --- the snapshot -----------------------------------------------------------------------------

def snapshot(ref: str, paths: list[str], start: str, extra: tuple[str, ...] = ()) -> Snapshot:
    """The Python files under `paths` (files or folders of the work tree) at `ref`; `extra`: files
    (paths in the work tree) whose bytes at `ref` are wanted too, when they are small."""
    with _at(ref, paths, start, extra) as (git, commit, rels, extra_rels):
        if not commit:
            snap = Snapshot(ref, "", tempfile.mkdtemp(prefix="attn-lint-rev-"), [])
            snap.left_out.append("every path (HEAD has no commit yet: the first commit's findings are all new)")
            return snap
        folder = tempfile.mkdtemp(prefix="attn-lint-rev-")
        snap = Snapshot(ref, commit, folder, [os.path.join(folder, r) if r else folder for r in rels])
        try:
            _write_tree(snap, git, commit, rels, extra_rels)
        except BaseException:
            snap.remove()
            raise
    # A path the revision does not have yet (a folder added since) holds nothing there.
    snap.paths = [p for p in snap.paths if os.path.exists(p)]
    return snap


@contextlib.contextmanager
def _at(ref: str, paths: list[str], start: str, extra: tuple[str, ...]):
    """(git, the commit or "" for an unborn HEAD, the paths and `extra` relative to the repository),
    with git closed after: what `listing` and `snapshot` both start from."""
    repo = find_repository(start)
    real_root = os.path.realpath(repo.work_tree)
    rels = [_relative(p, real_root, repo.work_tree) for p in paths]
    extra_rels = [_relative(p, real_root, repo.work_tree) for p in extra]
    git = _Git(repo)
    try:
        # The repository's first commit (a pre-commit hook comparing with HEAD): nothing came
        # before it, so every finding is new.
        commit = "" if ref == "HEAD" and _unborn(git) else resolve_commit(ref, git)
        yield git, commit, rels, extra_rels
    finally:
        git.close()


def listing(ref: str, paths: list[str], start: str, extra: tuple[str, ...] = ()) -> tuple[str, dict, dict]:
    """What `snapshot` would write, without writing it: (the commit, repository path -> blob id of
    every plain Python file under `paths` at `ref`, repository path -> blob id of each of `extra`
    it has). `git ls-tree` alone: no object is read. Raises RevisionError as `snapshot` does."""
    with _at(ref, paths, start, extra) as (git, commit, rels, extra_rels):
        if not commit:
            return "", {}, {}
        files = {path: obj for mode, obj, size, path in _entries(git, commit, _specs(rels))
                 if path.endswith((".py", ".pyi")) and mode in _PLAIN_MODES and _safe_relative(path)
                 and size <= MAX_FILE_BYTES}
        return commit, files, _extra_objects(git, commit, extra_rels)


def _relative(path: str, real_root: str, root: str) -> str:
    rel = os.path.relpath(os.path.realpath(path), real_root)
    if rel == os.pardir or rel.startswith(os.pardir + os.sep):
        raise RevisionError(f"{path} is outside the git repository at {root}")
    return "" if rel == os.curdir else rel.replace(os.sep, "/")


def _entries(git: _Git, commit: str, specs: list[str]):
    """(mode, object, size, path) of every blob under `specs` at `commit`, streamed."""
    proc = git.stream(["ls-tree", "-r", "-z", "-l", "--full-tree", commit, "--", *specs])
    try:
        buf = b""
        while True:
            chunk = proc.stdout.read(1 << 16)
            if not chunk:
                break
            buf += chunk
            *records, buf = buf.split(b"\0")
            for record in records:
                meta, _, path = record.partition(b"\t")
                parts = meta.decode("ascii", "replace").split()
                if len(parts) == 4 and parts[1] == "blob":
                    mode, _, obj, size = parts
                    yield mode, obj, int(size) if size.isdigit() else 0, os.fsdecode(path)
            if len(buf) > 1 << 20:
                raise RevisionError("git ls-tree gave a record longer than a path can be")
        if proc.wait() != 0:
            raise RevisionError(f"git ls-tree could not list {commit}")
    finally:
        _finish(proc)


def _specs(rels: list[str]) -> list[str]:
    """The analysed paths and the `__init__` files of the folders above them: they make the module
    names (`sglang/srt` is `sglang.srt` because `sglang/__init__.py` is there)."""
    specs: set[str] = set()
    for rel in rels if all(rels) else ():
        specs.add(rel)
        parts = rel.split("/")
        for n in range(1, len(parts)):
            specs |= {"/".join(parts[:n] + [init]) for init in ("__init__.py", "__init__.pyi")}
    return sorted(specs)


def _safe_relative(path: str) -> bool:
    parts = path.split("/")
    return bool(path) and not path.startswith("/") and "\\" not in path and \
        all(p not in ("", ".", "..") for p in parts) and "\0" not in path


def _write_tree(snap: Snapshot, git: _Git, commit: str, rels: list[str], extra: list[str]) -> None:
    wanted: dict[str, list[str]] = {}  # object -> the paths that hold it
    files = total = 0
    for mode, obj, size, path in _entries(git, commit, _specs(rels)):
        if not path.endswith((".py", ".pyi")):
            continue
        if mode not in _PLAIN_MODES:
            snap.left_out.append(f"{path} (not a plain file at {snap.ref}: mode {mode})")
        elif not _safe_relative(path):
            snap.left_out.append(f"{path!r} (a name that is not a plain relative path)")
        elif size > MAX_FILE_BYTES:  # (from ls-tree: never loaded into memory)
            snap.left_out.append(f"{path} (larger than {MAX_FILE_BYTES} bytes)")
        else:
            files += 1
            total += size
            if files > MAX_SNAPSHOT_FILES or total > MAX_SNAPSHOT_BYTES:
                raise RevisionError(f"{snap.ref} holds more Python under the analysed paths than --new-since "
                                    f"reads ({MAX_SNAPSHOT_FILES} files, {MAX_SNAPSHOT_BYTES >> 20} MB); "
                                    "analyse fewer paths")
            wanted.setdefault(obj, []).append(path)
    extra_objects = _extra_objects(git, commit, extra)
    if not wanted and not extra_objects:
        return
    proc = git.stream(["cat-file", "--batch"])
    try:
        for obj, paths in wanted.items():
            body = _cat(proc, obj, MAX_FILE_BYTES)
            if body is None:
                snap.left_out.extend(f"{p} (object {obj[:12]} is missing from the repository: a partial clone "
                                     "is never fetched from)" for p in paths)
                continue
            _write_copies(snap, paths, body)
        for path, obj in extra_objects.items():
            body = _cat(proc, obj, _SMALL)
            if body is not None:
                snap.extra[path] = body
    finally:
        _finish(proc)


def _extra_objects(git: _Git, commit: str, extra: list[str]) -> dict[str, str]:
    found = {}
    for path in extra:
        if path and _safe_relative(path):
            for mode, obj, size, listed in _entries(git, commit, [path]):
                if listed == path and mode in _PLAIN_MODES and size <= _SMALL:
                    found[path] = obj
    return found


def _cat(proc: subprocess.Popen, obj: str, limit: int) -> bytes | None:
    """One blob from `git cat-file --batch`; None when the repository lacks it."""
    proc.stdin.write(obj.encode("ascii") + b"\n")
    proc.stdin.flush()
    header = proc.stdout.readline(256).decode("ascii", "replace").split()
    if len(header) == 2 and header[1] == "missing":
        return None
    if len(header) != 3 or header[1] != "blob" or not header[2].isdigit():
        raise RevisionError(f"git cat-file gave no blob for {obj}")
    size = int(header[2])
    if size > limit:
        raise RevisionError(f"git cat-file gave {size} bytes for {obj}, more than ls-tree said")
    body = proc.stdout.read(size)
    proc.stdout.read(1)  # the newline after each object
    if len(body) != size:
        raise RevisionError(f"git cat-file stopped in the middle of {obj}")
    return body


def _write_copies(snap: Snapshot, paths: list[str], body: bytes) -> None:
    """The blob at its first path, and hard links to it at the others (no more scratch space)."""
    first = None
    for path in paths:
        target = os.path.join(snap.folder, *path.split("/"))
        try:
            os.makedirs(os.path.dirname(target), mode=0o700, exist_ok=True)
            if first is not None:
                try:
                    os.link(first, target)
                    snap.files += 1
                    continue
                except OSError:
                    pass  # a file system without hard links: a copy of its own
            fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
        except OSError as exc:  # `a.py` a file and `a.py/b.py` too, and the like
            snap.left_out.append(f"{path} ({exc.strerror or exc})")
            continue
        with os.fdopen(fd, "wb") as fh:
            fh.write(body)
        first = first or target
        snap.files += 1
