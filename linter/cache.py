"""On-disk cache of per-file summaries, keyed by content hash and tool version.

Layout under the cache folder:
    summaries/<2 hex>/<hash>.pickle   one summary (or the file's error) per distinct content
    stat-<key>.pickle                 path -> (mtime_ns, size, hash): skip re-reading unchanged files
    result-<key>.pickle               the whole run's result for one exact set of file hashes
Writes go to a temporary file first and are renamed into place, so a crash or a parallel run
never leaves a half-written entry; unreadable entries count as misses.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import sys

from .. import __version__
from .summary import SUMMARY_VERSION

# The modules whose code decides findings; the CLI and formatters do not key the cache.
ANALYSIS_MODULES = {"summary.py", "discover.py", "index.py", "resolve.py", "families.py", "context.py",
                    "signature.py", "astroid_bridge.py", "engine.py", "findings.py", "facts.py"}


def code_digest(only: str | None = None) -> str:
    """A digest of the analyser's own code: an edited rule must never be answered from the cache."""
    h = hashlib.blake2b(digest_size=8)
    here = os.path.dirname(os.path.abspath(__file__))
    for folder in (here, os.path.join(os.path.dirname(here), "rules")):
        try:
            names = sorted(n for n in os.listdir(folder) if n.endswith(".py") and (
                n == only if only else (folder.endswith("rules") or n in ANALYSIS_MODULES)))
        except OSError:
            continue
        for name in names:
            try:
                with open(os.path.join(folder, name), "rb") as fh:
                    h.update(fh.read())
            except OSError:
                pass
    return h.hexdigest()


TOOL_KEY = (f"{__version__}-s{SUMMARY_VERSION}-py{sys.version_info[0]}{sys.version_info[1]}-"
            f"{code_digest()}")
# Summaries depend only on the per-file pass, so rule edits keep them.
SUMMARY_KEY = f"{__version__}-s{SUMMARY_VERSION}-py{sys.version_info[0]}{sys.version_info[1]}-" \
              f"{code_digest('summary.py')}"


def default_cache_dir() -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "attn-lint")


_KEY_BYTES = SUMMARY_KEY.encode()


def entry_name(kind: str, key, size: int = 8) -> str:
    """The file name of a named cache entry: its kind and a digest of what identifies it."""
    return f"{kind}-{hashlib.blake2b(repr(key).encode(), digest_size=size).hexdigest()}.pickle"


def content_hash(data: bytes) -> str:
    h = hashlib.blake2b(data, digest_size=20)  # the same digest as of data + key, without copying data
    h.update(_KEY_BYTES)
    return h.hexdigest()


class Cache:
    resident = False  # kept in memory between runs (the server's): worth remembering more there
    path_sets_kept = 1  # sets of analysed paths whose in-memory state (facts, discovery) is kept

    def __init__(self, directory: str | None):
        self.dir = directory
        self.enabled = directory is not None
        if self.enabled:
            try:
                os.makedirs(os.path.join(directory, "summaries"), exist_ok=True)
            except OSError:
                self.enabled = False  # a read-only home must not stop the run

    def _summary_path(self, digest: str) -> str:
        return os.path.join(self.dir, "summaries", digest[:2], digest + ".pickle")

    def get_summary(self, digest: str):
        return self.decode(self.get_raw(digest))

    def get_raw(self, digest: str) -> bytes | None:
        """A summary's pickle as stored (a pool worker passes it on without unpickling)."""
        return self._read(self._summary_path(digest)) if self.enabled else None

    def put_raw(self, digest: str, raw: bytes) -> None:
        if self.enabled:
            self._write(self._summary_path(digest), raw)

    @staticmethod
    def decode(raw: bytes | None):
        """The value of a stored pickle; None for a missing or damaged entry (a miss)."""
        if raw is None:
            return None
        try:
            return pickle.loads(raw)
        except (EOFError, pickle.UnpicklingError, AttributeError, ImportError, TypeError, ValueError, IndexError):
            return None

    def keep(self, digest: str, value) -> None:
        """A summary parsed elsewhere (a worker wrote it to disk): a cache in memory keeps it too."""

    def load(self, name: str):
        return self._load(os.path.join(self.dir, name)) if self.enabled else None

    def store(self, name: str, value) -> None:
        if self.enabled:
            self._store(os.path.join(self.dir, name), value)

    @classmethod
    def _load(cls, path: str):
        return cls.decode(cls._read(path))

    @staticmethod
    def _read(path: str) -> bytes | None:
        try:
            with open(path, "rb") as fh:
                return fh.read()
        except OSError:
            return None

    def _store(self, path: str, value) -> None:
        self._write(path, pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))

    _made: set[str] = set()  # folders this process has created or seen: one mkdir each, not one per write

    @classmethod
    def _write(cls, path: str, data: bytes) -> None:
        folder = os.path.dirname(path)
        # A name of this process's own: parallel runs and workers never write the same temporary
        # file, and the rename makes the entry appear whole or not at all. (atomic.py writes user
        # files: it keeps their permissions, at the price of mkstemp and chmod on every write.)
        tmp = os.path.join(folder, f".tmp-{os.getpid()}-{os.path.basename(path)}")
        try:
            if folder not in cls._made:
                os.makedirs(folder, exist_ok=True)
                cls._made.add(folder)
            with open(tmp, "wb") as fh:
                fh.write(data)
            os.replace(tmp, path)
        except OSError:
            try:
                os.unlink(tmp)
            except OSError:
                pass  # a full disk degrades to no cache, never to a failed run
