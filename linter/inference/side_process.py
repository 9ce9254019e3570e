"""Helper processes of a run: the pool's workers, the cache writer, astroid's child.

Each dies with the parent (an orphan would keep the parent's descriptors, the resident server's
socket and lock among them, open), and each closes the pipe ends that only the parent may hold:
a helper forked after another one's pipe was made would otherwise keep it open after the parent
closed its own, and the other would never see the end of its input. Only the standard library
is loaded here.
"""

from __future__ import annotations

import os
import signal
import sys
import time

PARENT_ONLY_FDS: set[int] = set()  # pipe ends of the helpers, held by the parent alone


def settle_in_child(parent: int) -> None:
    """First thing in a forked helper: close the parent's ends of other helpers' pipes, and end
    with the parent."""
    for fd in PARENT_ONLY_FDS:
        try:
            os.close(fd)
        except OSError:
            pass
    die_with(parent)


def die_with(parent: int) -> None:
    """End this process when its parent ends, even by SIGKILL."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes
            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
        else:
            if os.getppid() != parent:  # the parent ended before the request took effect
                os._exit(1)
            return
    import threading

    def watch() -> None:  # elsewhere: notice being re-parented
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, daemon=True).start()


def fork_helper(fork, body, child_fds: tuple[int, ...], parent_fds: tuple[int, ...]) -> int:
    """Fork a helper that runs `body()` and exits; its pid, or 0 where fork failed (every
    descriptor given is then closed). `child_fds` are the helper's own (closed here in the
    parent), `parent_fds` the parent's (closed in the helper, and by helpers forked later)."""
    parent = os.getpid()
    try:
        import warnings
        with warnings.catch_warnings():
            # Python 3.12+ warns when forking a process with threads (the terminal spinner's): a
            # helper runs no code another thread could hold a lock for before it settles.
            warnings.simplefilter("ignore", DeprecationWarning)
            pid = fork()
    except OSError:
        for fd in (*child_fds, *parent_fds):
            os.close(fd)
        return 0
    if pid == 0:
        try:
            for fd in parent_fds:
                os.close(fd)
            settle_in_child(parent)
            body()
        finally:
            os._exit(0)  # never the parent's exit handlers, buffers or exceptions
    for fd in child_fds:
        os.close(fd)
    PARENT_ONLY_FDS.update(parent_fds)
    return pid


def close_parent_fds(*fds: int) -> None:
    """The parent is done with these ends of a helper's pipes."""
    for fd in fds:
        if fd >= 0:
            PARENT_ONLY_FDS.discard(fd)
            os.close(fd)
