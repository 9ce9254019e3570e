"""Which files to read, under which module names, and how to show their paths."""

from __future__ import annotations

import errno
import fnmatch
import io
import os
import stat
import time
import tokenize
from dataclasses import dataclass

from ..findings import FileError
from ..userfiles import within

# The folders ruff leaves out by default: tool caches, VCS metadata, virtual environments, build output.
SKIP_DIRS = {"__pycache__", ".bzr", ".direnv", ".eggs", ".git", ".git-rewrite", ".hg", ".ipynb_checkpoints",
             ".mypy_cache", ".nox", ".pants.d", ".pyenv", ".pytest_cache", ".pytype", ".ruff_cache", ".svn",
             ".tox", ".venv", ".vscode", "__pypackages__", "_build", "buck-out", "build", "dist",
             "node_modules", "site-packages", "venv"}

# The largest file the per-file pass reads (Settings.max_file_bytes is this by default).
MAX_FILE_BYTES = 8 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class SourceFile:
    path: str  # absolute, as found (symlinks not resolved, so users see their own paths)
    display: str  # relative to the command-line argument it was found under (with several, to their common folder)
    module: str  # dotted module name
    root: str = ""  # the import root the module name is relative to


# What `discover(..., remember=N)` keeps (the resident server asks for it): each path set's
# discovery, reused while no folder it read (walked, or looked at for __init__.py) has a new mtime.
# Adding, removing or renaming an entry changes its folder's mtime; editing a file does not, and
# needs no new discovery.
_REMEMBERED: dict[tuple, tuple[list[tuple[str, int]], list[SourceFile], list[FileError]]] = {}
_consulted: set[str] | None = None


def _mtime(path: str) -> int:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return -1


LINK_OUTSIDE = "a symbolic link that leads outside the analysed folders and the project root; not followed"


def discover(paths: list[str], exclude: tuple[str, ...] = (), remember: int = 0,
             link_roots: tuple[str, ...] | None = None,
             display_base: str | None = None) -> tuple[list[SourceFile], list[FileError]]:
    """The files under `paths`. With `remember`, the discoveries of that many path sets are kept
    and reused while their folders are unchanged. With `link_roots`, a link met while walking a
    folder is followed only where it leads inside that folder or one of `link_roots` (a
    repository's `lib -> /` must not walk the machine); paths given are followed wherever they
    lead. With `display_base`, each file is shown by its path from that folder (absolute where it
    lies outside it) rather than from the argument it was found under: every path a report
    prints, messages included, is then written once, the way the user will open it."""
    files, errors = _remembered(paths, exclude, remember, link_roots)
    if display_base is None:
        return files, errors
    shown = paths_within(display_base)
    return [SourceFile(f.path, shown(f.path, f.path), f.module, f.root) for f in files], errors


def _remembered(paths: list[str], exclude: tuple[str, ...], remember: int,
                link_roots: tuple[str, ...] | None) -> tuple[list[SourceFile], list[FileError]]:
    global _consulted
    if not remember:
        return _discover(paths, exclude, link_roots)
    key = (os.getcwd(), tuple(paths), tuple(exclude), link_roots)
    hit = _REMEMBERED.get(key)
    if hit is not None and all(_mtime(d) == m for d, m in hit[0]):
        return list(hit[1]), list(hit[2])
    started = time.time_ns()
    _consulted = {os.path.dirname(os.path.abspath(p)) for p in paths}
    try:
        files, errors = _discover(paths, exclude, link_roots)
        folders = [(d, _mtime(d)) for d in sorted(_consulted)]
    finally:
        _consulted = None
    # A folder changed while it was being read may have been listed before the change: not reused.
    _REMEMBERED.pop(key, None)
    if all(m < started - 1_000_000_000 for _, m in folders):
        _REMEMBERED[key] = (folders, list(files), list(errors))
        while len(_REMEMBERED) > remember:
            _REMEMBERED.pop(next(iter(_REMEMBERED)))
    return files, errors


def _discover(paths: list[str], exclude: tuple[str, ...],
              link_roots: tuple[str, ...] | None = None) -> tuple[list[SourceFile], list[FileError]]:
    files: list[SourceFile] = []
    errors: list[FileError] = []
    seen: set[str] = set()
    roots_cache: dict = {}
    if link_roots is not None:
        # A namespace root read from the tree's imports never lies above the project's folders:
        # a repository's imports must not make the analysis treat folders outside it as its own.
        roots_cache[_LIMITS] = tuple(os.path.abspath(r) for r in (*link_roots, *paths))
    real_dirs: dict[str, str] = {}  # realpath per folder: resolving each file's path costs a stat per component
    # A file's display names it for the whole run (reports, suppressions, baselines look files up
    # by it), so it must be unique: relative to its one argument, or with several arguments to
    # the folder they share, as two folders both hold `serving/backends/x.py`.
    given = [os.path.abspath(a) for a in paths if os.path.lexists(a)]
    anchor = None
    if len(set(given)) > 1:
        anchor = os.path.commonpath(given)
        if not os.path.isdir(anchor):
            anchor = os.path.dirname(anchor)
    for arg in paths:
        if not os.path.lexists(arg):
            errors.append(FileError(arg, "missing-path", "no such file or directory (given on the command line)"))
            continue
        if not os.path.isdir(arg):
            full = os.path.abspath(arg)
            _add(files, seen, roots_cache, full,
                 _display(full, anchor) if anchor else os.path.normpath(arg).replace(os.sep, "/"), errors)
            continue
        top = os.path.abspath(arg)
        visited_dirs: set[tuple[int, int]] = set()
        allowed = None if link_roots is None else \
            tuple(os.path.realpath(r) for r in (top, *link_roots))
        for dirpath, dirnames, entries in _walk(top, errors, allowed):
            try:
                st = os.stat(dirpath)
            except OSError as exc:
                errors.append(FileError(_display(dirpath, top), "unreadable", exc.strerror or str(exc)))
                dirnames[:] = []
                continue
            key = (st.st_dev, st.st_ino)
            if key in visited_dirs:
                errors.append(FileError(_display(dirpath, top), "symlink-loop",
                                        "directory already visited through another path (symlink loop); skipped"))
                dirnames[:] = []
                continue
            visited_dirs.add(key)
            if _consulted is not None:
                _consulted.add(dirpath)
            dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS
                                 and not matches(_display(os.path.join(dirpath, d), top), d, exclude))
            # What every file of the folder shares, worked out once per folder.
            shown_dir = "" if dirpath == top else _display(dirpath, top) + "/"
            folder = _Folder(dirpath, top, roots_cache, real_dirs)
            joined = folder.joined
            folder.real()  # its subfolders' real paths start from it
            for entry in sorted(entries, key=_name_of):
                name = entry.name
                if not name.endswith((".py", ".pyi")):
                    continue
                disp = shown_dir + name
                if exclude and matches(disp, name, exclude):
                    continue
                full = joined + name
                _add_entry(files, seen, folder, entry, full,
                           _display(full, anchor) if anchor else disp, errors, allowed)
    return files, errors


def _display(full: str, top: str) -> str:
    prefix = top.rstrip(os.sep) + os.sep
    rel = full[len(prefix):] if full.startswith(prefix) else os.path.relpath(full, top)
    return rel.replace(os.sep, "/")


def matches(display: str, name: str, patterns) -> bool:
    """Whether a path (relative, `/`-separated) or its file name matches a glob, or lies under one."""
    return any(fnmatch.fnmatch(display, p) or fnmatch.fnmatch(name, p) or fnmatch.fnmatch(display, p + "/*")
               for p in patterns)


def _add(files, seen, roots_cache, full, display, errors) -> None:
    """A file named on the command line."""
    try:
        mode = os.lstat(full).st_mode
    except OSError as exc:
        errors.append(FileError(display, "unreadable", exc.strerror or str(exc)))
        return
    is_link = stat.S_ISLNK(mode)
    if is_link:
        try:
            mode = os.stat(full).st_mode
        except OSError:
            errors.append(FileError(display, "unreadable", "broken symbolic link"))
            return
    if not stat.S_ISREG(mode):
        errors.append(FileError(display, "unreadable", NOT_REGULAR))
        return
    if _first_sight(seen, full, os.path.realpath(full)):
        files.append(SourceFile(full, display, module_name(full, roots_cache, None),
                                roots_cache.get((os.path.dirname(full), None), "")))


def _first_sight(seen: set[str], full: str, real: str) -> bool:
    """Whether a file is new to the run: not met before under another name (a link), and no
    stub (`.pyi`) beside its source (the implementation is what runs)."""
    if real in seen:
        return False
    seen.add(real)
    return not (full.endswith(".pyi") and os.path.exists(full[:-1]))


def _name_of(entry: os.DirEntry) -> str:
    return entry.name


def _leads_outside(path: str, allowed: tuple[str, ...]) -> bool:
    real = os.path.realpath(path)
    return not any(within(real, root) for root in allowed)


def _walk(top: str, errors: list, allowed: tuple[str, ...] | None = None):
    """os.walk(top, followlinks=True) in the same order (folders depth-first, each before what it
    holds, in the order the caller leaves in `dirnames`), yielding each folder's non-folder
    entries as DirEntry objects: their type comes with the listing, so a plain file costs no
    system call of its own (os.walk's names would cost an lstat each, 4,719 on sglang)."""
    stack = [top]
    while stack:
        path = stack.pop()
        try:
            with os.scandir(path) as it:
                listing = list(it)
        except OSError as exc:
            errors.append(FileError(_display(exc.filename or path, top), "unreadable", exc.strerror or str(exc)))
            continue
        dirnames: list[str] = []
        others: list[os.DirEntry] = []
        for entry in listing:
            try:
                is_dir = entry.is_dir()  # follows symbolic links, as followlinks=True does
            except OSError:
                is_dir = False
            if is_dir:
                if allowed is not None and entry.is_symlink() and _leads_outside(entry.path, allowed):
                    errors.append(FileError(_display(entry.path, top), "link-outside", LINK_OUTSIDE))
                    continue
                dirnames.append(entry.name)
            else:
                others.append(entry)
        yield path, dirnames, others
        stack.extend(os.path.join(path, d) for d in reversed(dirnames))


class _Folder:
    """One folder's share of its files' records: the module-name prefix, the import root and
    the folder's real path, each looked up once."""

    __slots__ = ("path", "joined", "top", "roots_cache", "real_dirs", "_prefix", "_real")

    def __init__(self, path: str, top: str, roots_cache: dict, real_dirs: dict) -> None:
        self.path, self.top, self.roots_cache, self.real_dirs = path, top, roots_cache, real_dirs
        self.joined = path if path.endswith(os.sep) else path + os.sep  # os.path.join(path, name) is this + name
        self._prefix: tuple[str, ...] | None = None
        self._real: str | None = None

    def _package(self) -> tuple[str, ...]:
        if self._prefix is None:  # (also finds the import root, kept in roots_cache)
            self._prefix = _module_prefix(self.path, self.roots_cache, self.top)
        return self._prefix

    def module(self, name: str) -> str:
        return _module_in(self._package(), name)

    def root(self) -> str:
        self._package()
        return self.roots_cache.get((self.path, self.top), "")

    def real(self) -> str:
        if self._real is None:
            real = self.real_dirs.get(self.path)
            if real is None:
                # A folder that is no link lies in its parent's real folder: one lstat, not one
                # per component of its path.
                parent, name = os.path.split(self.path)
                real_parent = self.real_dirs.get(parent)
                if real_parent is not None and name not in ("", os.curdir, os.pardir) \
                        and not os.path.islink(self.path):
                    real = os.path.join(real_parent, name)
                else:
                    real = os.path.realpath(self.path)
                self.real_dirs[self.path] = real
            self._real = real
        return self._real


def _add_entry(files, seen, folder: _Folder, entry: os.DirEntry, full: str, display: str, errors,
               allowed: tuple[str, ...] | None = None) -> None:
    """_add for a file found by listing its folder: a plain file's type is the listing's."""
    is_link = False
    try:
        is_link = entry.is_symlink()
        regular = is_link or entry.is_file(follow_symlinks=False)
        mode = os.stat(full).st_mode if is_link else None
    except OSError as exc:
        errors.append(FileError(display, "unreadable", "broken symbolic link" if is_link else
                                (exc.strerror or str(exc))))
        return
    if is_link and allowed is not None and _leads_outside(full, allowed):
        errors.append(FileError(display, "link-outside", LINK_OUTSIDE))
        return
    if not regular or (mode is not None and not stat.S_ISREG(mode)):
        errors.append(FileError(display, "unreadable", NOT_REGULAR))
        return
    if _first_sight(seen, full, os.path.realpath(full) if is_link else os.path.join(folder.real(), entry.name)):
        files.append(SourceFile(full, display, folder.module(entry.name), folder.root()))


def path_within(path: str, base: str, fallback: str) -> str:
    """`path` relative to `base` with `/` separators when it lies inside `base`, else `fallback`."""
    rel = os.path.relpath(path, base)
    return fallback if _outside(rel) else rel.replace(os.sep, "/")


def _outside(rel: str) -> bool:
    """A relative path that leaves its base (`..`, `../x`; not a name like `..h.py`)."""
    return rel == os.pardir or rel.startswith(os.pardir + os.sep)


_UNKNOWN = object()


def paths_within(base: str):
    """path_within for a whole tree's files under one base: os.path.relpath once per folder, not
    once per file (4,719 of them cost 0.12 s at the end of every run over sglang); a file's own
    name is one plain component, which relpath would only append."""
    folders: dict[str, str | None] = {}  # None: the folder lies outside `base`

    def within(path: str, fallback: str) -> str:
        folder, sep, name = path.rpartition(os.sep)
        if not sep or name in ("", os.curdir, os.pardir):
            return path_within(path, base, fallback)
        rel = folders.get(folder, _UNKNOWN)
        if rel is _UNKNOWN:
            rel = os.path.relpath(folder or os.sep, base)
            rel = folders[folder] = None if _outside(rel) else (
                "" if rel == os.curdir else rel.replace(os.sep, "/") + "/")
        return fallback if rel is None else rel + name

    return within


NOT_REGULAR = "not a regular file (a FIFO, socket or device); skipped"


def open_source(path: str):
    """`path` opened for binary reading, or OSError where it is not a regular file: a FIFO named
    `x.py` would block `open()` (and every read) for ever. Opened without blocking and checked
    on the open descriptor, so a file swapped for a FIFO after discovery cannot block either."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, NOT_REGULAR)
        if hasattr(os, "O_NONBLOCK"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def decode_source(data: bytes) -> str:
    """Source bytes as text, in the encoding the file declares (PEP 263; UTF-8 otherwise)."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        return data.decode(encoding, errors="replace")
    except (SyntaxError, LookupError):
        return data.decode("utf-8", errors="replace")


def import_root(f: SourceFile) -> str:
    """The folder `f`'s module name is relative to (what goes on sys.path to import it)."""
    if f.root:
        return f.root
    parts = f.module.rsplit(":", 1)[-1].split(".")  # a record made without discovery: from its name
    up = len(parts) if os.path.basename(f.path).startswith("__init__.") else len(parts) - 1
    root = os.path.dirname(os.path.abspath(f.path))
    for _ in range(up):
        root = os.path.dirname(root)
    return root


_LIMITS = ("limits",)  # roots_cache key: the folders a namespace root may lie in (the project's)
MAX_IMPORT_SAMPLES = 40  # files of a package read for how its own modules import it
_SAMPLE_BYTES = 1 << 16


def _namespace_root(package: str, cache: dict, named: bool = True) -> str:
    """The import root of the folder `package`: its parent where it is a regular package
    (`named`), itself otherwise (the folder given on the command line, under no package); but
    higher where the folders above are namespace packages (PEP 420: no `__init__.py`) that its own
    modules import through: `sglang/srt/` without `sglang/__init__.py`, whose modules write `from
    sglang.srt.layers.x import y`, is `sglang.srt`. Read from the absolute imports of up to
    MAX_IMPORT_SAMPLES of its files: an import `a.b.c` names a folder `a` above them, and the root
    is the folder holding it where `a/b` (and on) is there too; the root most imports agree on,
    by at least two, above the default one, and within the project's folders where discovery was
    told them (`link_roots`)."""
    key = ("namespace", package, named)
    if key in cache:
        return cache[key]
    root = os.path.dirname(package) if named else package
    above = os.path.dirname(root)
    if not os.path.basename(root).isidentifier() or above == root \
            or os.path.isfile(os.path.join(root, "__init__.py")):
        cache[key] = root  # (most trees: the folder above the top package is no package name)
        return root
    votes: dict[str, int] = {}
    for dotted in _absolute_imports(_sample_texts(package)):
        found = _holding_root(package, dotted.split("."))
        if found is not None and found != root and _above(found, root):
            votes[found] = votes.get(found, 0) + 1
    limits = cache.get(_LIMITS)
    if limits is not None:
        votes = {r: n for r, n in votes.items() if any(r == lim or _above(lim, r) for lim in limits)}
    best = max(votes.items(), key=lambda kv: (kv[1], -len(kv[0])), default=None)
    cache[key] = best[0] if best and best[1] >= 2 else root
    return cache[key]


def _above(folder: str, below: str) -> bool:
    return below.startswith(folder.rstrip(os.sep) + os.sep)


def _holding_root(start: str, parts: list[str]) -> str | None:
    """The folder above `start` that holds the imported `parts[0]` as one of `start`'s ancestors
    (or `start` itself), where `parts[0]/parts[1]` is a module or folder there too."""
    current = start
    for _ in range(32):
        if os.path.basename(current) == parts[0]:
            root = os.path.dirname(current)
            second = os.path.join(current, parts[1]) if len(parts) > 1 else None
            if second and (os.path.isdir(second) or os.path.isfile(second + ".py")):
                return root
            return None
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent
    return None


def _absolute_imports(texts: list[bytes]) -> list[str]:
    import re
    pattern = re.compile(rb"^[ \t]*(?:from[ \t]+([A-Za-z_][\w.]*)[ \t]+import|import[ \t]+([A-Za-z_][\w.]*))", re.M)
    out = []
    for t in texts:
        for m in pattern.finditer(t):
            name = (m.group(1) or m.group(2)).decode("ascii", "replace")
            if "." in name:
                out.append(name)
    return out


def _sample_texts(package: str) -> list[bytes]:
    """The heads of up to MAX_IMPORT_SAMPLES Python files of the package, nearest first."""
    out: list[bytes] = []
    folders = [package]
    while folders and len(out) < MAX_IMPORT_SAMPLES:
        folder = folders.pop(0)
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            if len(out) >= MAX_IMPORT_SAMPLES:
                break
            try:
                if entry.is_dir(follow_symlinks=False) and entry.name not in SKIP_DIRS:
                    folders.append(entry.path)
                elif entry.name.endswith(".py") and entry.is_file(follow_symlinks=False):
                    with open_source(entry.path) as fh:
                        out.append(fh.read(_SAMPLE_BYTES))
            except OSError:
                continue
    return out


def module_name(path: str, roots_cache: dict | None = None, top: str | None = None) -> str:
    """The module name Python would give the file.

    Walks up through packages as mypy does. Namespace packages (folders without __init__.py, as
    in sglang/srt) are crossed when a regular package lies above them, so that
    `sglang/srt/layers/x.py` is `sglang.srt.layers.x`, matching the tree's own imports. Where
    no regular package lies above, the folder given on the command line is the import root
    (folders below it are namespace packages), as for a source tree without `__init__.py` files.
    """
    cache = roots_cache if roots_cache is not None else {}
    directory, filename = os.path.split(path)
    return _module_in(_module_prefix(directory, cache, top), filename)


def _module_in(prefix: tuple[str, ...], filename: str) -> str:
    """The module a file of a package folder (`prefix`) is: a package's `__init__` is the package."""
    stem = filename.rsplit(".", 1)[0]
    return ".".join(prefix + ((stem,) if stem != "__init__" else ())) or stem


def _module_prefix(directory: str, cache: dict, top: str | None) -> tuple[str, ...]:
    """The package part of the module names of `directory`'s files."""
    prefix = cache.get(("prefix", directory, top))
    if prefix is None:
        root = _import_root(directory, cache, top)
        rel = os.path.relpath(directory, root)
        prefix = cache[("prefix", directory, top)] = () if rel == "." else tuple(rel.split(os.sep))
    return prefix


def folder_import_root(folder: str, cache: dict | None = None) -> str:
    """The folder a run given `folder` names its modules from (what goes on sys.path): above it
    through regular packages, and through namespace folders its own imports go through."""
    return _import_root(folder, {} if cache is None else cache, folder)


def _import_root(directory: str, cache: dict, top: str | None) -> str:
    if (directory, top) in cache:
        return cache[(directory, top)]
    chain = []
    current = directory
    highest_package = None
    for _ in range(32):
        name = os.path.basename(current)
        if not name.isidentifier():
            break
        chain.append(current)
        if _consulted is not None:
            _consulted.add(current)
        init = cache.get(("init", current))
        if init is None:
            init = cache[("init", current)] = os.path.isfile(os.path.join(current, "__init__.py"))
        if init:
            highest_package = current
        parent = os.path.dirname(current)
        if parent == current:
            break
        current = parent
    if highest_package:
        root = _namespace_root(highest_package, cache)
    elif top and (directory == top or directory.startswith(top.rstrip(os.sep) + os.sep)) and all(
            part.isidentifier() for part in os.path.relpath(directory, top).split(os.sep) if part != "."):
        root = _namespace_root(top, cache, named=False)
    else:
        root = directory
    cache[(directory, top)] = root
    return root
