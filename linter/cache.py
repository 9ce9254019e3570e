"""On-disk cache of per-file summaries, keyed by content hash and tool version.

Layout under the cache folder:
    summaries/<2 hex>/<hash>.entry   one summary (or the file's error) per distinct content
    stat-<key>.entry                 path -> (mtime_ns, size, hash): skip re-reading unchanged files
    result-<key>.entry               the whole run's result for one exact set of file hashes
    astroid-<key>.entry              astroid's answers, by probing file content and position
Writes go to a temporary file first and are renamed into place, so a crash or a parallel run
never leaves a half-written entry.

An entry is plain data (codec.py) in `marshal` form behind a header: a magic number and a keyed
digest of the entry's name and payload. Nothing is ever unpickled, and an entry is decoded only
when its digest matches, so a damaged, truncated, renamed or planted entry, a FIFO or anything
but a regular file is a miss: the run parses again and never fails or serves it.
"""

from __future__ import annotations

import hashlib
import hmac
import marshal
import os
import stat
import sys

from .. import __version__
from .codec import NAMED, Parsed, decode_parsed, encode_parsed
from .summary import SUMMARY_VERSION

# The modules of linter/ that cannot decide findings (command line, output, serving, fixing,
# the comparisons made after the analysis); every other module keys the cache, so that a module
# added later keys it too (an allow-list once missed two that decide findings).
PRESENTATION_MODULES = {"cli.py", "config.py", "server.py", "fix.py", "baseline.py", "suppress.py", "atomic.py"}
# What decides a stored summary's bytes.
STORAGE_MODULES = ("summary.py", "reaching.py", "deepstack.py", "codec.py", "cache.py")


def code_digest(only: str | tuple[str, ...] | None = None) -> str:
    """A digest of the analyser's own code: an edited rule must never be answered from the cache."""
    only = (only,) if isinstance(only, str) else only
    h = hashlib.blake2b(digest_size=8)
    here = os.path.dirname(os.path.abspath(__file__))
    # Every rule and every confidence signal decides findings, as do the analysis modules.
    whole = (os.path.join(os.path.dirname(here), "rules"), os.path.join(here, "signals"))
    for folder in (here, *whole):
        try:
            names = sorted(n for n in os.listdir(folder) if n.endswith(".py") and (
                n in only if only else (folder in whole or n not in PRESENTATION_MODULES)))
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
              f"{code_digest(STORAGE_MODULES)}"


def default_cache_dir() -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "attn-lint")


_KEY_BYTES = SUMMARY_KEY.encode()


def entry_name(kind: str, key, size: int = 8) -> str:
    """The file name of a named cache entry: its kind and a digest of what identifies it."""
    return f"{kind}-{hashlib.blake2b(repr(key).encode(), digest_size=size).hexdigest()}.entry"


_MAGIC = b"ALc\x01"
_SEAL_KEY = SUMMARY_KEY.encode()[:64]  # blake2b takes at most 64 key bytes
_SEAL_SIZE = 16
_HEADER_SIZE = len(_MAGIC) + _SEAL_SIZE
MAX_ENTRY_BYTES = 512 * 1024 * 1024  # far above any real entry; a bigger file is not one of ours


def _seal_digest(name: str, payload) -> bytes:
    h = hashlib.blake2b(name.encode(), key=_SEAL_KEY, digest_size=_SEAL_SIZE)
    h.update(payload)
    return h.digest()


def seal(name: str, plain) -> bytes:
    """The stored form of plain data under the entry name `name` (the digest binds the two, so an
    entry copied under another name is a miss)."""
    return sealed(name, marshal.dumps(plain, 4))


def sealed(name: str, payload: bytes) -> bytes:
    """`seal` of data already in marshal form."""
    return _MAGIC + _seal_digest(name, payload) + payload


def unseal(name: str, raw: bytes | None):
    """The plain data of an entry stored by `seal` under `name`; None for anything else."""
    if raw is None or len(raw) < _HEADER_SIZE or not raw.startswith(_MAGIC):
        return None
    payload = memoryview(raw)[_HEADER_SIZE:]
    if not hmac.compare_digest(raw[len(_MAGIC):_HEADER_SIZE], _seal_digest(name, payload)):
        return None
    try:
        return marshal.loads(payload)
    except Exception:  # marshal raises many kinds on bytes it did not write; all mean a miss
        return None


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
        return os.path.join(self.dir, "summaries", digest[:2], digest + ".entry")

    def get_summary(self, digest: str) -> Parsed | None:
        return self.decode(self.get_raw(digest), digest)

    def get_raw(self, digest: str) -> bytes | None:
        """A summary entry as stored (a pool worker passes it on without decoding it)."""
        return self._read(self._summary_path(digest)) if self.enabled else None

    def put_raw(self, digest: str, raw: bytes) -> None:
        if self.enabled:
            self._write(self._summary_path(digest), raw)

    @staticmethod
    def encode(parsed: Parsed) -> bytes:
        return sealed(parsed.digest, Cache.plain_bytes(parsed))

    @staticmethod
    def plain_bytes(parsed: Parsed) -> bytes:
        """A summary's plain form in marshal form: the payload of its entry, and what a pool worker
        hands its parent (codec.decode_own)."""
        return marshal.dumps(encode_parsed(parsed), 4)

    def get_checked_plain(self, digest: str) -> bytes | None:
        """The summary entry's payload (its plain form in marshal form) when the entry decodes as a
        summary, else None: what a pool worker hands its parent, which rebuilds it unchecked
        (codec.decode_own), without the cost of encoding the checked result again."""
        raw = self.get_raw(digest)
        if raw is None or self.decode(raw, digest) is None:
            return None
        return raw[_HEADER_SIZE:]

    @staticmethod
    def decode(raw: bytes | None, digest: str) -> Parsed | None:
        """The summary entry stored for `digest`; None for a missing, damaged or foreign one (a miss)."""
        plain = unseal(digest, raw)
        if plain is None:
            return None
        try:
            return decode_parsed(plain, digest)
        except Exception:  # a wrong shape anywhere, however it shows: a miss
            return None

    def in_memory(self, digest: str) -> Parsed | None:
        """A summary this cache holds in memory (the resident server's); None here."""
        return None

    def keep(self, digest: str, value) -> None:
        """A summary parsed elsewhere (a worker wrote it to disk): a cache in memory keeps it too."""

    def load(self, name: str):
        """A named entry (see entry_name), decoded by the codec of its kind; None for a miss."""
        if not self.enabled:
            return None
        plain = unseal(name, self._read(os.path.join(self.dir, name)))
        if plain is None:
            return None
        try:
            return NAMED[name.split("-", 1)[0]][1](plain)
        except Exception:
            return None

    def store(self, name: str, value) -> None:
        if self.enabled:
            self._write(os.path.join(self.dir, name), seal(name, NAMED[name.split("-", 1)[0]][0](value)))

    @staticmethod
    def _read(path: str) -> bytes | None:
        """The bytes of a regular file; None for anything else. O_NONBLOCK: opening a FIFO planted
        at an entry's name returns at once (and fstat then rejects it) instead of waiting for a writer."""
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
        except OSError:
            return None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_ENTRY_BYTES:
                return None
            chunks = []
            left = st.st_size + 1  # one byte more: a file that grew is read to its end or refused
            while left > 0:
                chunk = os.read(fd, left)
                if not chunk:
                    break
                chunks.append(chunk)
                left -= len(chunk)
            return None if left <= 0 else b"".join(chunks)
        except OSError:
            return None
        finally:
            os.close(fd)

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
            # O_EXCL and O_NOFOLLOW: never write into something already there (a planted FIFO
            # would block, a planted link would redirect the write); a stale one is removed once.
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
            try:
                fd = os.open(tmp, flags, 0o666)
            except FileExistsError:
                os.unlink(tmp)
                fd = os.open(tmp, flags, 0o666)
            with open(fd, "wb") as fh:
                fh.write(data)
            os.replace(tmp, path)
        except OSError:
            try:
                os.unlink(tmp)
            except OSError:
                pass  # a full disk degrades to no cache, never to a failed run
