"""The tree at a git revision, for `--new-since REF`: read from git's objects, never checked out.

`git ls-tree` lists the Python files under the analysed paths at REF and `git cat-file --batch`
hands over their bytes; they are written to a private scratch folder (mode 0700, removed after the
run) that mirrors the repository's layout, so that module names, display paths and exclusions are
the ones of the work tree. Nothing of the revision runs, the work tree and the index are left as
they are, and the summaries of files whose content did not change come from the cache (it is
keyed by content).

A repository can be hostile, so git is asked only for plumbing that reads objects (no hooks,
no fsmonitor, no filters, no pager, no prompts), a tree entry is written only where it is a
plain file with a plain relative name (no links, no submodules, no `..`), and a file larger than
the engine reads is left out.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field

from .discover import MAX_FILE_BYTES

GIT_TIMEOUT = 300  # seconds for one git command (listing or reading a large tree)
_SAFE_GIT = ("git", "--no-pager", "-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null",
             "-c", "core.untrackedCache=false", "-c", "safe.bareRepository=explicit")
_PLAIN_MODES = ("100644", "100755")


class RevisionError(Exception):
    """A one-line reason the revision cannot be read (not a git work tree, REF missing...)."""


@dataclass
class Snapshot:
    """The Python files of `paths` at one commit, written under `folder`."""

    ref: str
    commit: str
    folder: str
    paths: list[str]  # the analysed paths, as they lie in the snapshot
    files: int = 0
    left_out: list[str] = field(default_factory=list)  # 'path (why)' for entries not written

    def remove(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)


def _git(args: list[str], cwd: str, data: bytes | None = None) -> bytes:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_TERMINAL_PROMPT="0", GIT_OPTIONAL_LOCKS="0", GIT_NO_REPLACE_OBJECTS="1")
    try:
        proc = subprocess.run([*_SAFE_GIT, *args], cwd=cwd, input=data, capture_output=True, env=env,
                              timeout=GIT_TIMEOUT, check=False)
    except FileNotFoundError:
        raise RevisionError("git is not installed (--new-since reads the revision from git)") from None
    except subprocess.TimeoutExpired:
        raise RevisionError(f"git {args[0]} took more than {GIT_TIMEOUT} s") from None
    if proc.returncode != 0:
        message = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise RevisionError(message[-1] if message else f"git {args[0]} failed")
    return proc.stdout


def repository_root(start: str) -> str:
    try:
        out = _git(["rev-parse", "--show-toplevel"], start)
    except RevisionError as exc:
        raise RevisionError(f"{start} is not in a git work tree ({exc})") from None
    return os.fsdecode(out.rstrip(b"\n"))


def resolve_commit(ref: str, root: str) -> str:
    if not ref or ref.startswith("-") or "\0" in ref:
        raise RevisionError(f"{ref!r} is not a revision")
    try:
        out = _git(["rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}"], root)
    except RevisionError:
        out = b""
    commit = out.decode("ascii", "replace").strip()
    if not commit:
        try:
            shallow = _git(["rev-parse", "--is-shallow-repository"], root).strip() == b"true"
        except RevisionError:
            shallow = False
        hint = (" This is a shallow clone: fetch the revision first (git fetch --depth=1 origin "
                f"{ref})." if shallow else " Fetch it first (git fetch origin " + ref + ").")
        raise RevisionError(f"revision {ref!r} is not in this repository.{hint}")
    return commit


def snapshot(ref: str, paths: list[str], start: str) -> Snapshot:
    """The Python files under `paths` (files or folders of the work tree) at `ref`."""
    root = repository_root(start)
    commit = resolve_commit(ref, root)
    real_root = os.path.realpath(root)
    rels = []
    for p in paths:
        rel = os.path.relpath(os.path.realpath(p), real_root)
        if rel == os.pardir or rel.startswith(os.pardir + os.sep):
            raise RevisionError(f"{p} is outside the git repository at {root}")
        rels.append("" if rel == os.curdir else rel.replace(os.sep, "/"))
    folder = tempfile.mkdtemp(prefix="attn-lint-rev-")
    snap = Snapshot(ref, commit, folder, [os.path.join(folder, r) if r else folder for r in rels])
    try:
        _write_tree(snap, commit, rels, root)
    except BaseException:
        snap.remove()
        raise
    # A path the revision does not have yet (a folder added since) holds nothing there.
    snap.paths = [p for p in snap.paths if os.path.exists(p)]
    return snap


def _entries(commit: str, rels: list[str], root: str) -> list[tuple[str, str, int, str]]:
    """(mode, object, size, path) of every blob under `rels` at `commit`, and the `__init__` files of
    the folders above them: they make the module names (`sglang/srt` is `sglang.srt` because
    `sglang/__init__.py` is there)."""
    specs: set[str] = set()
    for rel in rels if all(rels) else ():
        specs.add(rel)
        parts = rel.split("/")
        for n in range(1, len(parts)):
            specs |= {"/".join(parts[:n] + [init]) for init in ("__init__.py", "__init__.pyi")}
    out = _git(["ls-tree", "-r", "-z", "-l", "--full-tree", commit, "--", *sorted(specs)], root)
    entries = []
    for record in out.split(b"\0"):
        if not record:
            continue
        meta, _, path = record.partition(b"\t")
        mode, kind, obj, size = meta.decode("ascii", "replace").split()
        if kind == "blob":
            entries.append((mode, obj, int(size) if size.isdigit() else 0, os.fsdecode(path)))
    return entries


def _safe_relative(path: str) -> bool:
    parts = path.split("/")
    return bool(path) and not path.startswith("/") and "\\" not in path and \
        all(p not in ("", ".", "..") for p in parts) and "\0" not in path


def _write_tree(snap: Snapshot, commit: str, rels: list[str], root: str) -> None:
    small = []
    for mode, obj, size, path in _entries(commit, rels, root):
        if not path.endswith((".py", ".pyi")):
            continue
        if mode not in _PLAIN_MODES:
            snap.left_out.append(f"{path} (not a plain file at {snap.ref}: mode {mode})")
        elif not _safe_relative(path):
            snap.left_out.append(f"{path!r} (a name that is not a plain relative path)")
        elif size > MAX_FILE_BYTES:  # (from ls-tree: never loaded into memory)
            snap.left_out.append(f"{path} (larger than {MAX_FILE_BYTES} bytes)")
        else:
            small.append((obj, path))
    if not small:
        return
    data = _git(["cat-file", "--batch"], root, "".join(f"{obj}\n" for obj, _ in small).encode("ascii"))
    pos = 0
    for _obj, path in small:
        end = data.index(b"\n", pos)
        header = data[pos:end].decode("ascii", "replace").split(" ")
        if len(header) != 3 or header[1] != "blob":
            raise RevisionError(f"git cat-file gave no blob for {path}")
        size = int(header[2])
        body = data[end + 1:end + 1 + size]
        pos = end + 1 + size + 1
        target = os.path.join(snap.folder, *path.split("/"))
        try:
            os.makedirs(os.path.dirname(target), mode=0o700, exist_ok=True)
            fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
        except OSError as exc:  # `a.py` a file and `a.py/b.py` too, and the like
            snap.left_out.append(f"{path} ({exc.strerror or exc})")
            continue
        with os.fdopen(fd, "wb") as fh:
            fh.write(body)
        snap.files += 1
