"""Running a recursive pass on input nested deeper than the interpreter's default limit allows.

CPython compiles expressions and `elif` chains a few thousand levels deep, but a recursive walk
of their tree runs out of the default recursion limit (1,000 frames) at a few hundred. Raising
the limit for the whole process would let any other recursion overflow the C stack, so only the
rare walk that needs it is run again, in a thread of its own with a large stack and a high limit.
"""

from __future__ import annotations

import sys
import threading

# ast.parse itself refuses trees more than about three levels per frame of the recursion limit,
# and the walks take at most a few frames per level: this covers anything it returns.
DEEP_RECURSION_LIMIT = 60_000
DEEP_STACK_BYTES = 512 * 1024 * 1024  # address space, not memory: pages are used only if reached
_LOCK = threading.Lock()


def call_deep(fn, *args):
    """`fn(*args)`; if it runs out of recursion depth, once more with room for deep input."""
    try:
        return fn(*args)
    except RecursionError:
        pass
    outcome: list = []

    def target() -> None:
        try:
            outcome.append((True, fn(*args)))
        except BaseException as exc:  # handed to the caller's thread, where it belongs
            outcome.append((False, exc))

    with _LOCK:  # the limit and the stack size are process-wide settings
        old_limit = sys.getrecursionlimit()
        old_size = threading.stack_size(DEEP_STACK_BYTES)
        try:
            sys.setrecursionlimit(max(old_limit, DEEP_RECURSION_LIMIT))
            worker = threading.Thread(target=target, name="attn-lint-deep")
            worker.start()
            worker.join()
        finally:
            threading.stack_size(old_size)
            sys.setrecursionlimit(old_limit)
    ok, value = outcome[0]
    if not ok:
        raise value
    return value
