"""Where the resident server of a project lives: its state folder, its name and its socket.

Kept apart from server.py so that a one-shot run, which uses a server only when one is already
listening, can look for its socket without importing the server (sockets, pickle, threads,
subprocess: about a tenth of a warm run's imports).
"""

from __future__ import annotations

import hashlib
import os
import stat


def state_dir(cache_dir: str) -> str:
    return os.path.join(cache_dir, "server")


def project_root(project: str) -> str:
    return os.path.realpath(project)


def server_name(cache_dir: str, project: str) -> str:
    """The server's name: its cache folder and project root, and nothing about the build or the
    interpreter that runs it."""
    return hashlib.blake2b(f"{os.path.realpath(cache_dir)}|{project_root(project)}".encode(),
                           digest_size=8).hexdigest()


def socket_path(cache_dir: str, project: str, create: bool = False) -> str:
    """Where the server of `project` on `cache_dir` listens (its folder made, or tightened, 0700
    with `create`). Raises OSError when that folder is not the user's own: requests and answers
    are pickles, so nobody else may be able to put a socket there."""
    folder = state_dir(cache_dir)
    name = server_name(cache_dir, project)
    path = os.path.join(folder, name + ".sock")
    if len(path.encode()) >= 100:  # AF_UNIX paths are limited to about 107 bytes
        import tempfile
        folder = os.path.join(tempfile.gettempdir(), f"attn-lint-{os.getuid()}")
        path = os.path.join(folder, name + ".sock")
    if create:
        make_private(folder)
        return path
    if not os.path.isdir(folder):
        return path  # nothing has ever listened there
    st = os.lstat(folder)
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() \
            or st.st_mode & 0o022:
        raise OSError(f"{folder} can be written by others: not using it for the server's socket")
    return path


def make_private(folder: str) -> None:
    """Make `folder` the user's alone (0700), creating it. The mode is set explicitly: mkdir's is
    masked by the umask, and an existing folder (one an older attn-lint made 0755) keeps its own.
    A folder that is a link or another user's is refused: it could hold anyone's socket or files."""
    os.makedirs(os.path.dirname(folder), exist_ok=True)
    try:
        os.mkdir(folder, 0o700)
    except FileExistsError:
        pass
    try:  # opened, not looked up by name: what is checked and tightened is what is there now
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        raise OSError(f"{folder} is not a folder (a link or another kind of file): "
                      f"not using it for the server") from None
    try:
        st = os.fstat(fd)
        if st.st_uid != os.getuid():
            raise OSError(f"{folder} belongs to another user: not using it for the server")
        if stat.S_IMODE(st.st_mode) != 0o700:
            os.fchmod(fd, 0o700)
    finally:
        os.close(fd)


def may_be_listening(cache_dir: str, project: str) -> bool:
    """Whether a server of `project` may be listening: something is at its socket's path (or the
    path cannot be checked: let the client say why). False only when nothing could answer."""
    try:
        return os.path.lexists(socket_path(os.path.abspath(cache_dir), project))
    except OSError:
        return True
