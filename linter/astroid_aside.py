"""astroid on the idle core: the bridge's queries answered by a child process while the rules go on.

After the parse, the tree passes keep one core busy, and astroid's queries (up to the run's whole
budget, half a second on a cold run over sglang) ran on that same core, each one holding up the
rule that asked. Here the first query forks a child, which holds the index and the bridge as they
are (memo, budget, time spent); every query goes to it and the rules go on as if astroid had no
answer, which is what it answers nearly always (on sglang: never). When the rules are done, the
parent collects the answers into the bridge's memo. If one of them names a class, the rules run
again and read it from the memo: the findings are those of a run that asks astroid in place, and
the second pass is paid only where astroid found something.

The child answers in the order the queries were asked, within the same per-query limit and run
budget, so the same queries get answers (or run out of time) as they would in place.
"""

from __future__ import annotations

import marshal
import os
import select
import signal
import struct
import time

from .astroid_bridge import _TIMED_OUT, AstroidBridge

_FRAME = struct.Struct("<I")
_SLACK = 10.0  # seconds past the budget before a child that never answers is given up on


class AsideBridge(AstroidBridge):
    """An AstroidBridge whose queries run in a child process until `finish`."""

    fork = staticmethod(getattr(os, "fork", None))

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._pid = 0
        self._queries = -1  # where the parent writes queries
        self._answers = -1  # where it reads the answers, at the end
        self._sent: set[tuple] = set()
        self._done = self.fork is None  # asked in place from then on

    def _ask(self, mod, line: int, col: int, key: tuple) -> tuple | None:
        if self._done or (not self._pid and not self._start()):
            return super()._ask(mod, line, col, key)
        if key not in self._sent:
            self._sent.add(key)
            frame = marshal.dumps((mod.name, line, col, key))
            try:
                _write_all(self._queries, _FRAME.pack(len(frame)) + frame)
            except OSError:
                pass  # the child is gone: no answer, as when the budget runs out
        return None  # for now: finish() says whether the rules must run again

    def finish(self) -> bool:
        """Wait for the child's answers and remember them; True when one names a class (the rules
        must run again to use it). Queries after this are asked in place."""
        self._done = True
        if not self._pid:
            return False
        pid, self._pid = self._pid, 0
        os.close(self._queries)
        data = _read_until_closed(self._answers, time.monotonic() + max(0.0, self.budget - self.spent) + _SLACK)
        os.close(self._answers)
        if data is None:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass
        try:
            answers, self.calls, self.timeouts, self.spent = marshal.loads(data)
        except (TypeError, ValueError, EOFError):
            return False  # the child died: no answers, as if the budget had run out
        found = False
        for key, answer in answers:
            if answer is not None:
                self._remember(tuple(key), answer)
                found = found or bool(answer[0])
        return found

    def _start(self) -> bool:
        q_read, q_write = os.pipe()
        a_read, a_write = os.pipe()
        parent = os.getpid()
        try:
            import warnings
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)  # forking with threads: see _LateWrites
                pid = self.fork()
        except OSError:
            for fd in (q_read, q_write, a_read, a_write):
                os.close(fd)
            self._done = True
            return False
        if pid == 0:
            try:
                os.close(q_write)
                os.close(a_read)
                from .engine import _die_with
                _die_with(parent)
                self._serve(q_read, a_write)
            finally:
                os._exit(0)  # never the parent's exit handlers, buffers or exceptions
        os.close(q_read)
        os.close(a_write)
        self._pid, self._queries, self._answers = pid, q_write, a_read
        return True

    def _serve(self, queries: int, out: int) -> None:
        """In the child: answer each query as it comes; all answers at once when the parent is done."""
        answers = []
        with os.fdopen(queries, "rb") as fh:
            while True:
                head = fh.read(_FRAME.size)
                if len(head) < _FRAME.size:
                    break
                module, line, col, key = marshal.loads(fh.read(_FRAME.unpack(head)[0]))
                mod = self.index.modules[module]
                answer = self._infer(mod, line, col)
                answers.append((key, None if answer is _TIMED_OUT or answer is None else answer))
        _write_all(out, marshal.dumps((answers, self.calls, self.timeouts, self.spent)))
        os.close(out)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _read_until_closed(fd: int, deadline: float) -> bytes | None:
    """Everything written to the pipe until its writer closed it; None past the deadline."""
    chunks = []
    while True:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            return None
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
