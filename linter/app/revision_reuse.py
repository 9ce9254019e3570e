"""`--new-since REF` without analysing REF again, where a run already analysed the same contents.

A pre-commit hook compares the commit being made with HEAD, and HEAD is, file for file, what the
previous commit's hook analysed. So every `--new-since` run keeps its own findings (as REF's would
be kept: every confidence, before the changed-files filter, paths relative to the repository) under
a key made of the contents it analysed: each file's git blob id, with the configuration file's and
the settings. Asked for REF, the key is made again from `git ls-tree` (no object read, nothing
written) over the files the run analyses now, those REF has and the work tree no longer does, and
REF's configuration file; a stored entry under it is REF's findings. Anything else (another
configuration, a file that differs) makes another key: REF is then read and analysed as before.

What a stored run read beyond the analysed files must hold still (read_set.py): a project file it
read must be one of the files the key names; files outside the project are kept with their stamps,
checked when served.
"""

from __future__ import annotations

import hashlib
import os

from ..files.read_set import OUTSIDE_PREFIX, Reads, ReadSet
from ..files.revision import MAX_FILE_BYTES
from ..perfile.cache import TOOL_KEY, Cache, content_hash, entry_name
from ..userfiles import Refused, read_regular


def blob_id(data: bytes) -> str:
    """What git names a file's bytes (`git hash-object`)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def key(settings_key, files: dict[str, str], config: str | None) -> str:
    return entry_name("result", ("at-revision", TOOL_KEY, settings_key, sorted(files.items()), config), size=16)


def work_files(paths: list[str], root: str, digests: dict[str, str] | None = None,
               known: dict[str, str] | None = None) -> dict[str, str] | None:
    """Repository path -> blob id of each file analysed now; None where one cannot be read again.
    `digests` (path -> the content digest the engine analysed) and `known` (content digest -> blob
    id, from earlier runs: both name contents, so the pair never goes stale) spare reading a file
    whose blob id a run already computed; `known` learns the others."""
    real_root = os.path.realpath(root)
    real_dirs: dict[str, str] = {}  # one realpath per folder, not per file
    out = {}
    for path in paths:
        folder, name = os.path.split(path)
        real_dir = real_dirs.get(folder)
        if real_dir is None:
            real_dir = real_dirs[folder] = os.path.realpath(folder or os.curdir)
        real = os.path.realpath(path) if os.path.islink(path) else os.path.join(real_dir, name)
        if not real.startswith(real_root.rstrip(os.sep) + os.sep):
            return None
        rel = real[len(real_root.rstrip(os.sep)) + 1:]
        digest = digests.get(path) if digests is not None else None
        blob = known.get(digest) if known is not None and digest is not None else None
        if blob is None:
            try:
                data = read_regular(path, MAX_FILE_BYTES, path)
            except (Refused, OSError):
                return None
            blob = blob_id(data)
            if known is not None and digest is not None and content_hash(data) == digest:
                known[digest] = blob  # (only where the bytes read are those the engine analysed)
        out[rel.replace(os.sep, "/")] = blob
    return out


def blobs_entry(root: str) -> str:
    """The cache entry holding a repository's content digest -> blob id pairs."""
    return entry_name("blobs", (TOOL_KEY, os.path.realpath(root)))


def keep(cache: Cache, settings_key, files: dict[str, str], config: str | None, findings: list,
         reads: ReadSet | None, base: str, root: str) -> None:
    """Keep a run's findings for a later `--new-since` whose REF has these very contents. What it
    read of the project must be among the files the key names (their contents are the key's);
    what it read outside the project is kept with its stamps, checked when served. (Modules it
    looked for and did not find are the key's business too: the files it names are the tree.)"""
    if reads is None:
        return
    outside = []
    for name, stamp in reads.files:
        if name.startswith(OUTSIDE_PREFIX):
            outside.append((name, stamp))
            continue
        rel = os.path.relpath(os.path.join(base, name), root).replace(os.sep, "/")
        if rel not in files:
            return  # it read a project file it did not analyse: its contents are not in the key
    cache.store(key(settings_key, files, config), {"findings": findings, "file_errors": [], "stats": {},
                                                    "reads": ReadSet(tuple(outside), ())})


def served(cache: Cache, settings_key, ref_files: dict[str, str], config: str | None) -> list | None:
    """REF's findings where a run analysed its very contents, and what it read is as it was."""
    hit = cache.load(key(settings_key, ref_files, config))
    if hit is None or not Reads([], {}, blob_id).holds(hit["reads"]):
        return None
    return hit["findings"]


def at_revision_files(listed: dict[str, str], analysed: set[str], root: str) -> dict[str, str]:
    """The files a run at REF would analyse: those analysed now that REF has, and those REF has
    that the work tree no longer does (a file deleted since)."""
    return {rel: blob for rel, blob in listed.items()
            if rel in analysed or not os.path.lexists(os.path.join(root, rel))}
