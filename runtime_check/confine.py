"""What the `--verify` process gives up before the code under verification runs.

The user's code runs in children of a fresh interpreter (clean_process.py), never in forks of
attn-lint itself, so that nothing attn-lint held (the caller's environment, the cache's seal key
in memory) is there to be read. This module says what that interpreter starts with and what it
gives up:

* **an allow-listed environment** (`clean_environment`): what running Python, CUDA and
  FlashInfer needs (the path, home, locale, temporary folder, `PYTHON*`, `CUDA*`, `NVIDIA_*`,
  `TORCH_*`, `TRITON_*`, `FLASHINFER_*`, the library path, attn-lint's own `ATTN_LINT_*`
  settings), never `ATTN_LINT_CACHE_KEY` nor anything else: a CI job's tokens stay behind;
* **on Linux, where a mount namespace can be had** (as root, or through an unprivileged user
  namespace): the cache's key file hidden behind an empty file and the cache folders read-only,
  locked by a second user namespace so that the code, root in its own, cannot unmount them
  (`confine`);
* **no access to attn-lint's own process**: it is not dumpable while verification runs
  (`set_dumpable`), so that no child can read its memory or environment through /proc.

What is not promised (docs/security.md): the code runs as the user and can do to the rest of the
machine what the user can; without a mount namespace it can read the key file. Running
`--verify` on a stranger's code belongs in a container or a throwaway machine.
"""

from __future__ import annotations

import ctypes
import os
import re
import sys

ALLOWED = re.compile(r"(PATH|HOME|USER|LOGNAME|SHELL|TERM|TMPDIR|TMP|TEMP|TZ|LANG|LANGUAGE|LC_\w+|PYTHON\w*"
                     r"|CUDA\w*|NVIDIA_\w+|LD_LIBRARY_PATH|FLASHINFER_\w+|TORCH_\w+|TRITON_\w+|MAX_JOBS"
                     r"|OMP_NUM_THREADS|MKL_\w+|OPENBLAS_\w+|VIRTUAL_ENV|CONDA_PREFIX|XDG_CACHE_HOME"
                     r"|XDG_RUNTIME_DIR|ATTN_LINT_\w+)")
NEVER = frozenset({"ATTN_LINT_CACHE_KEY"})

_CLONE_NEWNS, _CLONE_NEWUSER = 0x00020000, 0x10000000
_MS_RDONLY, _MS_REMOUNT, _MS_BIND, _MS_REC, _MS_PRIVATE = 1, 32, 4096, 16384, 1 << 18
_PR_SET_DUMPABLE, _PR_GET_DUMPABLE = 4, 3


def allowed(name: str) -> bool:
    return name not in NEVER and ALLOWED.fullmatch(name) is not None


def clean_environment(env) -> dict[str, str]:
    """The allow-listed part of `env`."""
    return {k: v for k, v in env.items() if allowed(k)}


def _libc():
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None


def set_dumpable(on: bool) -> bool | None:
    """Linux: whether other processes of the user may read this one's memory and environment
    through /proc (and attach a debugger); returns the previous setting, None where unknown."""
    libc = _libc() if sys.platform.startswith("linux") else None
    if libc is None:
        return None
    was = libc.prctl(_PR_GET_DUMPABLE, 0, 0, 0, 0)
    if was < 0 or libc.prctl(_PR_SET_DUMPABLE, int(on), 0, 0, 0) != 0:
        return None
    return bool(was)


def confine(hidden: tuple[str, ...] = (), read_only: tuple[str, ...] = ()) -> list[str]:
    """In the verification process, before any code of the repository runs: `hidden` files behind
    an empty one and `read_only` folders read-only, for it and every process it starts. Returns
    what could not be done, as phrases."""
    hidden = tuple(p for p in hidden if os.path.isfile(p))
    read_only = tuple(p for p in read_only if os.path.isdir(p))
    if not (hidden or read_only):
        return []
    libc = _libc() if sys.platform.startswith("linux") else None
    if libc is None or not _new_namespaces(libc):
        return ["the key file and the cache could not be hidden from it (no mount namespace here)"]
    problems = []
    for path in hidden:
        if libc.mount(b"/dev/null", os.fsencode(path), None, _MS_BIND, None) != 0:
            problems.append(f"{path} could not be hidden from it")
    for path in read_only:
        p = os.fsencode(path)
        if libc.mount(p, p, None, _MS_BIND | _MS_REC, None) != 0 or \
                libc.mount(None, p, None, _MS_REMOUNT | _MS_BIND | _MS_RDONLY, None) != 0:
            problems.append(f"{path} could not be made read-only for it")
    # A second user namespace: the masks become part of what it inherits, locked, so that the code,
    # root in its own namespace, cannot unmount them.
    if not _enter_user_namespace(libc):
        problems.append("the masks could not be locked")
    return problems


def _new_namespaces(libc) -> bool:
    """A private mount namespace, in a user namespace of its own (root or not)."""
    if not _enter_user_namespace(libc):
        return False
    return libc.mount(b"none", b"/", None, _MS_REC | _MS_PRIVATE, None) == 0


def _enter_user_namespace(libc) -> bool:
    """A user namespace mapping the same user, with a mount namespace of its own."""
    uid, gid = os.geteuid(), os.getegid()  # (read before: unmapped, they read as the overflow id)
    if libc.unshare(_CLONE_NEWUSER | _CLONE_NEWNS) != 0:
        return False
    try:
        with open("/proc/self/setgroups", "w") as fh:
            fh.write("deny")
        with open("/proc/self/uid_map", "w") as fh:
            fh.write(f"{uid} {uid} 1")
        with open("/proc/self/gid_map", "w") as fh:
            fh.write(f"{gid} {gid} 1")
    except OSError:
        return False
    return True
