"""The child process of astroid_aside.py: forked before the parse, it answers astroid's queries
on the core the tree passes leave idle. Only the standard library is loaded here: a run answered
from the whole-result cache never loads astroid or the tree passes."""

from __future__ import annotations

import marshal
import os
import select
import signal
import struct
import time

from .side_process import close_parent_fds, fork_helper

_FRAME = struct.Struct("<I")
_SLACK = 10.0  # seconds past the budget before a child that never answers is given up on


class AstroidChild:
    """The child process and its two pipes, seen from the parent."""

    fork = staticmethod(getattr(os, "fork", None))

    def __init__(self, per_call: float, budget: float):
        self.per_call, self.budget = per_call, budget
        self.pid = 0
        self._queries = -1  # where the parent writes
        self._answers = -1  # where it reads, at the end

    def open(self) -> bool:
        """Fork the child; False where there is none (astroid is then asked in place)."""
        if self.fork is None:
            return False
        q_read, q_write = os.pipe()
        a_read, a_write = os.pipe()
        self.pid = fork_helper(self.fork, lambda: _serve(q_read, a_write, self.per_call, self.budget),
                               child_fds=(q_read, a_write), parent_fds=(q_write, a_read))
        if self.pid:
            self._queries, self._answers = q_write, a_read
        return bool(self.pid)

    def send(self, message: tuple) -> None:
        if self.pid:
            frame = marshal.dumps(message)
            try:
                _write_all(self._queries, _FRAME.pack(len(frame)) + frame)
            except OSError:
                pass  # the child is gone: no answers, as when the budget runs out

    def collect(self) -> tuple | None:
        """(answers, calls, timeouts, seconds spent) once the child has answered every query; None
        when it died or never answered. The child has ended when this returns."""
        if not self.pid:
            return None
        pid, self.pid = self.pid, 0
        close_parent_fds(self._queries)
        data = _read_until_closed(self._answers, time.monotonic() + self.budget + _SLACK)
        close_parent_fds(self._answers)
        self._queries = self._answers = -1
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
            answers, calls, timeouts, spent = marshal.loads(data)
        except (TypeError, ValueError, EOFError):
            return None  # the child died: no answers, as if the budget had run out
        return answers, calls, timeouts, spent


def _serve(queries: int, out: int, per_call: float, budget: float) -> None:
    """In the child: ready astroid when the roots come, answer each query as it comes, send every
    answer when the parent closes its end."""
    from .astroid_bridge import TIMED_OUT, AstroidBridge, prepare
    bridge = None
    answers = []
    with os.fdopen(queries, "rb") as fh:
        while True:
            head = fh.read(_FRAME.size)
            if len(head) < _FRAME.size:
                break
            message = marshal.loads(fh.read(_FRAME.unpack(head)[0]))
            if message[0] == "roots":
                bridge = AstroidBridge(None, per_call=per_call, budget=budget)
                bridge._roots = list(message[1])
                prepare()  # astroid's one-off setup, here rather than in the busy parent
            elif bridge is not None:
                _, key, path, modname, line, col = message
                raw = bridge._raw_infer(path, modname, line, col)
                answers.append((key, None if raw is TIMED_OUT or raw is None else raw))
    stats = (bridge.calls, bridge.timeouts, bridge.spent) if bridge is not None else (0, 0, 0.0)
    _write_all(out, marshal.dumps((answers, *stats)))
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
