"""Reading and writing the files a user or a repository names (baselines, pyproject.toml, `--fix`).

A repository is not trusted beyond its text: it can plant a link named like the file a README tells
the user to write (`.attn-lint-baseline.json` -> `~/.bashrc`), a FIFO where a file is read (a read
that never ends), or a link to `/dev/zero` (one that never stops). So:

* a read takes a regular file only, opened without blocking and checked on the open descriptor,
  and at most `limit` bytes of it;
* a write goes to a temporary file in the target's real folder and is renamed over the target: a
  crash or a full disk leaves the old file whole, and the write never goes *through* a link. Before
  that, the target is resolved: a link that lies inside the project and leads out of it is refused,
  as is a target that exists and is not a regular file (a device, a FIFO, a folder) or whose folder
  is missing. Links outside the project (`/tmp` on some systems, a home folder that is a link) are
  the user's own and are followed.

The target keeps its permissions and its owner and group (a new file gets 0o644 rather than
mkstemp's 0o600); where the owner cannot be kept (not root), nothing is written.
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile


class Refused(Exception):
    """A file attn-lint will not read or write; the message is one line that names it."""


def within(path: str, folder: str) -> bool:
    """Whether `path` is `folder` or lies under it (both absolute and normalised)."""
    folder = folder.rstrip(os.sep) or os.sep
    return path == folder or path.startswith(folder if folder.endswith(os.sep) else folder + os.sep)


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def read_regular(path: str, limit: int, what: str) -> bytes:
    """The bytes of the regular file `path`, at most `limit` of them; Refused otherwise, with a
    message that starts with `what` (say "baseline x.json")."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise Refused(f"cannot read {what}: {exc.strerror or exc}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise Refused(f"cannot read {what}: it is {_kind(st.st_mode)}")
        if st.st_size > limit:
            raise Refused(f"cannot read {what}: larger than {limit // 2**20} MB")
        if hasattr(os, "O_NONBLOCK"):
            os.set_blocking(fd, True)
        chunks, left = [], limit + 1  # one byte more: a file that grew since fstat is refused too
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        if left <= 0:
            raise Refused(f"cannot read {what}: larger than {limit // 2**20} MB")
        return b"".join(chunks)
    except OSError as exc:
        raise Refused(f"cannot read {what}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


def output_target(path: str, project_root: str, what: str) -> str:
    """The real path to write when the user names `path` (a baseline): Refused where a link inside
    the project leads out of it, where the folder is missing, or where something other than a
    regular file is there."""
    full = os.path.abspath(path)
    root = os.path.realpath(project_root)
    folder = os.path.realpath(os.path.dirname(full))
    lexical_root = os.path.abspath(project_root)
    planted = within(os.path.dirname(full), lexical_root) or within(os.path.dirname(full), root)
    if planted and not within(folder, root):
        raise Refused(f"refusing to write {what}: its folder is a link out of the project root {project_root}")
    target = os.path.join(folder, os.path.basename(full))
    if os.path.islink(target):
        real = os.path.realpath(target)
        if within(folder, root) and not within(real, root):
            raise Refused(f"refusing to write {what}: it is a symbolic link out of the project root {project_root}")
        target = real
    return _writable(target, what)


def inside_target(path: str, roots: tuple[str, ...], what: str) -> str:
    """The real path to write for a file that must lie inside one of `roots` (a file `--fix`
    rewrites): Refused where its real path lies outside all of them or is not a regular file."""
    real = os.path.realpath(path)
    if not any(within(real, os.path.realpath(r)) for r in roots):
        raise Refused(f"refusing to write {what}: it is a link to a file outside the project root")
    return _writable(real, what)


def _writable(target: str, what: str) -> str:
    try:
        st = os.lstat(target)
    except FileNotFoundError:
        if not os.path.isdir(os.path.dirname(target)):
            raise Refused(f"cannot write {what}: no such folder {os.path.dirname(target)}") from None
        return target
    except OSError as exc:
        raise Refused(f"cannot write {what}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(st.st_mode):
        raise Refused(f"refusing to write {what}: it is {_kind(st.st_mode)}")
    return target


def replace_file(target: str, data: bytes) -> None:
    """Write `data` as the file `target` (a real path from output_target or inside_target): a new
    file in its folder, renamed over it. rename() replaces whatever is at the name, a link
    included, and never writes into what it points to."""
    fd, tmp = tempfile.mkstemp(prefix=".attn-lint-", suffix=".tmp", dir=os.path.dirname(target))
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        try:
            old = os.lstat(target)
        except FileNotFoundError:
            os.chmod(tmp, 0o666 & ~_umask())
        else:
            if not stat.S_ISREG(old.st_mode):  # swapped since it was checked
                raise OSError(errno.EINVAL, "it is no longer a regular file")
            new = os.stat(tmp)
            if (new.st_uid, new.st_gid) != (old.st_uid, old.st_gid):
                try:
                    os.chown(tmp, old.st_uid, old.st_gid)
                except PermissionError as exc:
                    raise PermissionError(exc.errno, f"cannot keep its owner and group "
                                                     f"({old.st_uid}:{old.st_gid})") from exc
            os.chmod(tmp, old.st_mode & 0o7777)  # after chown, which clears set-id bits
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
