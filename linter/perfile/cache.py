"""On-disk cache of per-file summaries, keyed by content hash and tool version.

Layout under the cache folder:
    summaries/<2 hex>/<hash>.entry   one summary (or the file's error) per distinct content
    packs/pack-<key>.pack            many summaries written at once (a large parse's new ones): one
                                     file, where thousands of entry files cost seconds of file
                                     creation on some file systems
    stat-<key>.entry                 path -> ((mtime_ns, size, ctime_ns, inode), hash): skip re-reading
                                     unchanged files (an edit that puts the mtime back, `touch -r`,
                                     still moves the ctime)
    result-<key>.entry               the whole run's result for one exact set of file hashes
    astroid-<key>.entry              one project's astroid answers, by probing file content and position
    pruned                           when the cache was last bounded (Cache.prune: by age, count, size)
Writes go to a temporary file first and are renamed into place, so a crash or a parallel run
never leaves a half-written entry.

An entry is plain data (codec.py) in `marshal` form behind a header: a magic number and a keyed
digest of the entry's name and payload. A pack holds summary entries exactly as their own files
would, one after another, behind its index (a sealed entry of its own: digest, offset, length).
Nothing is ever unpickled, and an entry is decoded only when its digest matches, so a damaged,
truncated, renamed or planted entry, a FIFO or anything but a regular file is a miss: the run
parses again and never fails or serves it.

The digest's key is a secret of the user's, never derived from public values: whoever can write
into a cache folder (a CI cache shared between jobs, a cache folder inside a repository) could
otherwise seal an entry of their own that says "no findings". It is 32 random bytes in
$XDG_CONFIG_HOME/attn-lint/cache-key (created 0600, in a folder made 0700, outside every cache
and repository), or derived from $ATTN_LINT_CACHE_KEY where a CI job keeps its key among its
secrets. Where neither can be had (a read-only home), the key lives as long as the process: the
cache then only serves the process that wrote it (the resident server).
"""

from __future__ import annotations

import hashlib
import hmac
import marshal
import os
import secrets
import stat
import sys
import time

from ... import __version__
from .codec import NAMED, Parsed, decode_parsed, encode_parsed
from .summary import SUMMARY_VERSION

# The modules of linter/ that cannot decide findings (command line, output, serving, fixing,
# the comparisons made after the analysis), as paths from the folder that holds linter/ and rules/;
# every other module keys the cache, so that a module added later keys it too (an allow-list once
# missed two that decide findings). The formatters (linter/report/) only render findings.
PRESENTATION_MODULES = {"linter/app/cli.py", "linter/app/config.py", "linter/app/options.py", "linter/app/server.py",
                        "linter/app/fix.py", "linter/app/baseline.py", "linter/files/suppress.py"}
PRESENTATION_FOLDERS = ("linter/report/",)
# What decides a stored summary's bytes: the per-file pass and what it imports, and the codec.
STORAGE_MODULES = ("linter/perfile/summary.py", "linter/refs.py", "linter/perfile/reaching.py",
                   "linter/perfile/deepstack.py", "linter/perfile/guards.py", "linter/perfile/platforms.py",
                   "linter/perfile/codec.py", "linter/perfile/cache.py")
_HOME = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # holds linter/ and rules/


def analysis_modules() -> list[str]:
    """Every module that can decide findings, as a path from the folder holding linter/ and rules/."""
    out = []
    for top in ("linter", "rules"):
        for folder, dirs, files in os.walk(os.path.join(_HOME, top)):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            rel = os.path.relpath(folder, _HOME).replace(os.sep, "/") + "/"
            out += [rel + n for n in files if n.endswith(".py") and rel + n not in PRESENTATION_MODULES
                    and not rel.startswith(PRESENTATION_FOLDERS)]
    return sorted(out)


def code_digest(only: str | tuple[str, ...] | None = None) -> str:
    """A digest of the analyser's own code: an edited rule must never be answered from the cache.
    `only`: those modules (paths as in STORAGE_MODULES) instead of every one deciding findings."""
    only = (only,) if isinstance(only, str) else only
    h = hashlib.blake2b(digest_size=8)
    for rel in (sorted(only) if only else analysis_modules()):
        try:
            with open(os.path.join(_HOME, rel), "rb") as fh:
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


KEY_ENV = "ATTN_LINT_CACHE_KEY"
_KEY_BYTES_LEN = 32
_keys: dict[str, bytes] = {}  # where the secret came from -> the seal key made of it


def key_file() -> str:
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(base, "attn-lint", "cache-key")


def seal_key() -> bytes:
    """The key of every entry's digest: this build's SUMMARY_KEY keyed by the user's secret."""
    given = os.environ.get(KEY_ENV)
    # Named by a digest of the secret, never the secret itself: forget_keys overwrites the keys.
    where = "env:" + hashlib.blake2b(given.encode(), digest_size=8).hexdigest() if given else key_file()
    key = _keys.get(where)
    if key is None:
        secret = hashlib.blake2b(given.encode(), digest_size=_KEY_BYTES_LEN).digest() if given \
            else _user_secret(where)
        key = _keys[where] = hashlib.blake2b(SUMMARY_KEY.encode(), key=secret, digest_size=32).digest()
    return key


def _user_secret(path: str) -> bytes:
    """The secret in `path`, made there when missing or unfit (not a regular file of ours that
    only we can read); a secret of this process alone where it cannot be kept."""
    secret = _read_secret(path)
    if secret is not None:
        return secret
    fresh = secrets.token_bytes(_KEY_BYTES_LEN)
    folder = os.path.dirname(path)
    tmp = os.path.join(folder, f".cache-key-{os.getpid()}-{secrets.token_hex(4)}")
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
        with open(fd, "wb") as fh:
            fh.write(fresh)
        try:
            os.link(tmp, path)  # appears whole or not at all, and never over another process's key
        except FileExistsError:
            if _read_secret(path) is None:  # unfit: a link, another owner's, readable by others
                os.replace(tmp, path)
        return _read_secret(path) or fresh
    except OSError:
        return fresh
    finally:
        try:
            os.unlink(tmp)
        except OSError:
            pass


def _read_secret(path: str) -> bytes | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o077 \
                or st.st_size != _KEY_BYTES_LEN:
            return None
        data = os.read(fd, _KEY_BYTES_LEN + 1)
        return data if len(data) == _KEY_BYTES_LEN else None
    except OSError:
        return None
    finally:
        os.close(fd)


_MAGIC = b"ALc\x02"
_SEAL_SIZE = 16
_HEADER_SIZE = len(_MAGIC) + _SEAL_SIZE
_PACK_MAGIC = b"ALp\x02"
_PACK_HEAD = len(_PACK_MAGIC) + 8  # then the index's length, then the index, then the entries
MAX_ENTRY_BYTES = 512 * 1024 * 1024  # far above any real entry; a bigger file is not one of ours
# The cache's bounds (Cache.prune). Summaries of sglang's whole package take about 50 MB, so the
# byte bound holds some forty releases or checkouts of a tree that size.
MAX_SUMMARY_BYTES = 2 * 2**30
NAMED_KEPT = 256  # stat maps, results and astroid memos of each kind
KEEP_UNUSED = 30 * 86400  # seconds
PRUNE_EVERY = 3600  # seconds
PACK_BYTES = 128 * 1024 * 1024  # a pack's entries (sglang's 1.8 M lines: 50 MB)


def _seal_digest(name: str, payload) -> bytes:
    h = hashlib.blake2b(name.encode(), key=seal_key(), digest_size=_SEAL_SIZE)
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

    def __init__(self, directory: str | None, keeps_runs: bool = True):
        self.dir = directory
        self.enabled = directory is not None
        # Whether a run's own entries (stat map, whole result, astroid's answers) are kept: not for
        # a tree that exists only for one run (--new-since's snapshot), whose paths never come back.
        self.keeps_runs = keeps_runs
        self._packs: dict[str, list[tuple[str, int, int]]] = {}  # digest -> (pack, offset, length)
        self._packs_stamp: tuple | None = None  # the packs folder as it was when they were indexed
        if self.enabled:
            try:
                os.makedirs(os.path.join(directory, "summaries"), exist_ok=True)
            except OSError:
                self.enabled = False  # a read-only home must not stop the run

    def _summary_path(self, digest: str) -> str:
        return os.path.join(self.dir, "summaries", digest[:2], digest + ".entry")

    def get_summary(self, digest: str) -> Parsed | None:
        for raw in self._stored(digest):
            parsed = self.decode(raw, digest)
            if parsed is not None:
                return parsed
        return None

    def _stored(self, digest: str):
        """Each stored copy of a summary entry, as stored: in a pack, then in its own file (a
        damaged copy in a pack must not hide a good one written later)."""
        if not self.enabled:
            return
        where = self._packs.get(digest)
        if where is None:  # the packs are looked at again only for a summary they did not hold
            where = self._pack_index().get(digest, ())
        for pack, offset, length in where:
            raw = self._read_slice(pack, offset, length)
            if raw is not None:
                yield raw
        raw = self._read(self._summary_path(digest))
        if raw is not None:
            yield raw

    def put_raw(self, digest: str, raw: bytes) -> None:
        if self.enabled:
            self._write(self._summary_path(digest), raw)

    def put_pack(self, plains: dict[str, bytes]) -> None:
        """Store many summaries (digest -> plain form in marshal form) in new packs of at most
        PACK_BYTES each (an entry bigger than that gets a pack of its own)."""
        if not (self.enabled and plains):
            return
        index, chunks, offset = [], [], 0
        for digest in sorted(plains):
            raw = sealed(digest, plains[digest])
            if index and offset + len(raw) > PACK_BYTES:
                self._write_pack(index, chunks)
                index, chunks, offset = [], [], 0
            index.append((digest, offset, len(raw)))
            chunks.append(raw)
            offset += len(raw)
        self._write_pack(index, chunks)

    def _write_pack(self, index: list[tuple[str, int, int]], chunks: list[bytes]) -> None:
        # Named by what it holds: two runs that write the same summaries write the same pack.
        key = hashlib.blake2b("\n".join(d for d, _, _ in index).encode(), key=seal_key(), digest_size=16)
        name = f"pack-{key.hexdigest()}.pack"
        head = seal(name, tuple(index))
        self._write(os.path.join(self.dir, "packs", name),
                    b"".join([_PACK_MAGIC, len(head).to_bytes(8, "little"), head, *chunks]))

    def _pack_index(self) -> dict[str, list[tuple[str, int, int]]]:
        """Where the packs hold each summary; read again when a pack came or went."""
        folder = os.path.join(self.dir, "packs")
        try:
            st = os.stat(folder)
            stamp = (st.st_ino, st.st_mtime_ns, st.st_size)
        except OSError:
            stamp = None
        if stamp == self._packs_stamp:
            return self._packs
        found: dict[str, list[tuple[str, int, int]]] = {}
        try:
            names = sorted(n for n in os.listdir(folder) if n.startswith("pack-") and n.endswith(".pack"))
        except OSError:
            names = []
        for name in names:
            path = os.path.join(folder, name)
            for digest, offset, length in self._read_pack_index(path, name):
                found.setdefault(digest, []).append((path, offset, length))
        self._packs, self._packs_stamp = found, stamp
        return found

    @staticmethod
    def _read_pack_index(path: str, name: str) -> list[tuple[str, int, int]]:
        """A pack's index, with offsets from the start of the file; [] for anything but a whole,
        undamaged pack of ours (its entries are checked again, one by one, when read)."""
        opened = Cache._open_regular(path, limit=None)  # bounded by what its index may name
        if opened is None:
            return []
        fd, size = opened
        try:
            head = os.pread(fd, _PACK_HEAD, 0)
            if len(head) != _PACK_HEAD or not head.startswith(_PACK_MAGIC):
                return []
            n = int.from_bytes(head[len(_PACK_MAGIC):], "little")
            if n > min(size - _PACK_HEAD, PACK_BYTES):
                return []
            index = unseal(name, os.pread(fd, n, _PACK_HEAD))
        except OSError:
            return []
        finally:
            os.close(fd)
        base, out = _PACK_HEAD + n, []
        if not isinstance(index, tuple):
            return []
        for item in index:
            if not (isinstance(item, tuple) and len(item) == 3 and isinstance(item[0], str)
                    and type(item[1]) is int and type(item[2]) is int):
                return []
            digest, offset, length = item
            if offset < 0 or not _HEADER_SIZE <= length <= MAX_ENTRY_BYTES or base + offset + length > size:
                return []
            out.append((digest, base + offset, length))
        return out

    @staticmethod
    def _read_slice(path: str, offset: int, length: int) -> bytes | None:
        opened = Cache._open_regular(path, limit=None)
        if opened is None:
            return None
        fd = opened[0]
        try:
            raw = os.pread(fd, length, offset)
        except OSError:
            return None
        finally:
            os.close(fd)
        return raw if len(raw) == length else None

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
        for raw in self._stored(digest):
            if self.decode(raw, digest) is not None:
                return raw[_HEADER_SIZE:]
        return None

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
        path = os.path.join(self.dir, name)
        plain = unseal(name, self._read(path))
        if plain is None:
            return None
        try:
            value = NAMED[name.split("-", 1)[0]][1](plain)
        except Exception:
            return None
        try:
            os.utime(path)  # used: the last to go when the cache is pruned
        except OSError:
            pass
        return value

    # --- bounds ---------------------------------------------------------------------------------
    def prune_if_due(self, now: float | None = None) -> bool:
        """Prune at most once per PRUNE_EVERY seconds (a stamp file says when it last ran)."""
        if not self.enabled:
            return False
        now = time.time() if now is None else now
        stamp = os.path.join(self.dir, "pruned")
        try:
            if now - os.stat(stamp).st_mtime < PRUNE_EVERY:
                return False
        except OSError:
            pass
        self._write(stamp, b"")
        self.prune(now)
        return True

    def prune(self, now: float | None = None) -> None:
        """Bound the cache: a run's own entries (stat maps, results, astroid's answers) unused for
        KEEP_UNUSED seconds go, and past NAMED_KEPT of a kind the least recently used; summaries
        and packs beyond MAX_SUMMARY_BYTES go oldest first, down to three quarters of it (a
        summary lost is parsed again); leftovers of crashed writes go after a day."""
        now = time.time() if now is None else now
        named: dict[str, list[tuple[float, str]]] = {}
        stored: list[tuple[float, int, str]] = []
        for path, st in self._files():
            name = os.path.basename(path)
            if name.startswith((".tmp-", ".cache-key-")):
                if now - st.st_mtime > 86400:
                    self._remove(path)
            elif os.path.dirname(path) == self.dir and name.endswith(".entry"):
                named.setdefault(name.split("-", 1)[0], []).append((st.st_mtime, path))
            elif name.endswith((".entry", ".pack")):
                stored.append((st.st_mtime, st.st_size, path))
        for entries in named.values():
            entries.sort(reverse=True)
            for n, (mtime, path) in enumerate(entries):
                if n >= NAMED_KEPT or now - mtime > KEEP_UNUSED:
                    self._remove(path)
        total = sum(size for _, size, _ in stored)
        if total > MAX_SUMMARY_BYTES:
            for _, size, path in sorted(stored):
                if total <= MAX_SUMMARY_BYTES * 3 // 4:
                    break
                self._remove(path)
                total -= size

    def _files(self):
        """(path, lstat) of every regular file in the cache folder and its subfolders (links are
        neither followed nor counted)."""
        todo = [self.dir]
        while todo:
            folder = todo.pop()
            try:
                entries = list(os.scandir(folder))
            except OSError:
                continue
            for entry in entries:
                try:
                    if entry.is_dir(follow_symlinks=False):
                        todo.append(entry.path)
                    elif entry.is_file(follow_symlinks=False):
                        yield entry.path, entry.stat(follow_symlinks=False)
                except OSError:
                    continue

    @staticmethod
    def _remove(path: str) -> None:
        try:
            os.unlink(path)
        except OSError:
            pass

    def store(self, name: str, value) -> None:
        if self.enabled:
            self._write(os.path.join(self.dir, name), seal(name, NAMED[name.split("-", 1)[0]][0](value)))

    @staticmethod
    def _open_regular(path: str, limit: int | None = MAX_ENTRY_BYTES) -> tuple[int, int] | None:
        """(a descriptor, the size) of a regular file of at most `limit` bytes; None for anything else.
        O_NONBLOCK: opening a FIFO planted at an entry's name returns at once (and fstat then
        rejects it) instead of waiting for a writer."""
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
        except OSError:
            return None
        try:
            st = os.fstat(fd)
        except OSError:
            st = None
        if st is None or not stat.S_ISREG(st.st_mode) or (limit is not None and st.st_size > limit):
            os.close(fd)
            return None
        return fd, st.st_size

    @staticmethod
    def _read(path: str) -> bytes | None:
        """The bytes of a regular file; None for anything else."""
        opened = Cache._open_regular(path)
        if opened is None:
            return None
        fd, size = opened
        try:
            chunks = []
            left = size + 1  # one byte more: a file that grew is read to its end or refused
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
        # file, and the rename makes the entry appear whole or not at all. (userfiles.py writes user
        # files: it keeps their permissions, at the price of mkstemp and chmod on every write.)
        tmp = os.path.join(folder, f".tmp-{os.getpid()}-{os.path.basename(path)}")
        try:
            if folder not in cls._made:
                os.makedirs(folder, exist_ok=True)
                # A cache folder inside a repository (--cache-dir .cache) holds what the repository
                # planted: a subfolder that is a link would take entries outside the cache.
                if os.path.islink(folder) or os.path.islink(os.path.dirname(folder)):
                    return
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
