"""What a cached answer read beyond the analysed files, so that it is served only while all of that
is as it was.

astroid follows imports into files the run did not analyse: other files of the project (a run
over one folder of it) and installed packages. An answer it gave, and a whole run's result that
used one, depend on those files too. Each is recorded with a stamp: a project file by its content
digest and its path relative to the project (the cache entry holding it is the project's own, so
no other project can meet it), a file outside the project by its size, mtime and inode (a package
upgrade replaces it; nothing of the repository's can). Modules astroid looked for in the project
and did not find are recorded too: one that appears later could change the answer.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

from .discover import open_source

OUTSIDE_PREFIX = "/"  # names of files outside the project are absolute; the project's are relative


@dataclass(frozen=True)
class ReadSet:
    files: tuple[tuple[str, str], ...] = ()  # (name, stamp), sorted
    absent: tuple[str, ...] = ()  # module names not found under the project's roots, sorted

    def __or__(self, other: ReadSet) -> ReadSet:
        return ReadSet(tuple(sorted(set(self.files) | set(other.files))),
                       tuple(sorted(set(self.absent) | set(other.absent))))


class Reads:
    """Stamps files and checks read sets for one project (its import roots) in one run; a file is
    stamped at most once per run."""

    def __init__(self, roots: list[str], analysed: dict[str, str], digest: Callable[[bytes], str]):
        self.roots = sorted(roots)
        self.digest = digest  # of a file's bytes, as the analysed files' digests are made
        self.base = os.path.commonpath(self.roots) if self.roots else ""
        self.analysed = analysed  # path -> content digest of the files the run read itself
        self._stamps: dict[str, str] = {}

    def in_project(self, path: str) -> bool:
        return path in self.analysed or any(path.startswith(r.rstrip(os.sep) + os.sep) for r in self.roots)

    def record(self, paths, absent) -> ReadSet:
        files = set()
        for p in paths:
            if not p:
                continue
            path = os.path.abspath(p)
            files.add((self._name(path), self.stamp(path)))
        return ReadSet(tuple(sorted(files)), tuple(sorted(n for n in absent if not self.findable(n))))

    def holds(self, reads: ReadSet) -> bool:
        return all(self.stamp(self._path(name)) == stamp for name, stamp in reads.files) and \
            not any(self.findable(name) for name in reads.absent)

    def _name(self, path: str) -> str:
        if self.base and self.in_project(path):
            return os.path.relpath(path, self.base)
        return path

    def _path(self, name: str) -> str:
        return name if name.startswith(OUTSIDE_PREFIX) else os.path.join(self.base, name)

    def stamp(self, path: str) -> str:
        hit = self._stamps.get(path)
        if hit is None:
            hit = self._stamps[path] = self._content(path) if self.in_project(path) else self._stat(path)
        return hit

    def _content(self, path: str) -> str:
        digest = self.analysed.get(path)
        if digest is not None:
            return "c" + digest
        try:
            with open_source(path) as fh:
                return "c" + self.digest(fh.read())
        except OSError:
            return "-"

    @staticmethod
    def _stat(path: str) -> str:
        try:
            st = os.stat(path)
        except OSError:
            return "-"
        return f"s{st.st_size}:{st.st_mtime_ns}:{st.st_ino}"

    def findable(self, name: str) -> bool:
        """Whether a module astroid did not find exists now under one of the project's roots."""
        rel = name.replace(".", os.sep)
        return any(os.path.exists(os.path.join(r, rel + ".py")) or os.path.isdir(os.path.join(r, rel))
                   for r in self.roots)
