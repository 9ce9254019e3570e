"""Writing user files: a temporary file in the same folder, renamed over the target.

A crash or a full disk leaves the old file whole. A symbolic link is written through: its target
is replaced and the link stays. The target keeps its permissions and its owner and group (a new
file gets 0o644 rather than mkstemp's 0o600); where the owner cannot be kept (not root), nothing
is written.
"""

from __future__ import annotations

import os
import tempfile


def atomic_write_bytes(path: str, data: bytes) -> None:
    path = os.path.realpath(path)  # os.replace on the link itself would turn it into a plain file
    fd, tmp = tempfile.mkstemp(prefix=".attn-lint-", suffix=".tmp", dir=os.path.dirname(path))
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        try:
            old = os.stat(path)
        except OSError:
            os.chmod(tmp, 0o644)
        else:
            new = os.stat(tmp)
            if (new.st_uid, new.st_gid) != (old.st_uid, old.st_gid):
                try:
                    os.chown(tmp, old.st_uid, old.st_gid)
                except PermissionError as exc:
                    raise PermissionError(exc.errno, f"cannot keep its owner and group "
                                                     f"({old.st_uid}:{old.st_gid})") from exc
            os.chmod(tmp, old.st_mode & 0o7777)  # after chown, which clears set-id bits
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
