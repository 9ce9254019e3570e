"""Run the user's code in child processes that attn-lint supervises from outside.

``--verify`` imports the user's modules and calls their methods; a module body can call
``os._exit``, crash the interpreter, fork, ignore SIGALRM and loop, or patch attn-lint's own
functions. So the work runs in a forked child, one batch of tasks at a time, and the parent only
reads plain JSON lines from a pipe:

* the child starts its own session (process group), so on a timeout ``os.killpg`` takes its forked
  grandchildren with it; the group is killed after every batch, so nothing it started outlives it;
* the deadline is kept by the parent (``select`` with a timeout, the child's exit seen through
  ``waitpid``), never by waiting for EOF on a pipe that a grandchild may hold open;
* a task that does not finish gets a ``Failure`` saying what happened to its process (the exit
  status, the signal, the time limit, malformed data); the tasks after it run in a fresh child;
* the child's fds 0-2 are /dev/null, so nothing it writes reaches attn-lint's own output;
* after each task the child compares attn-lint's modules (and ``json``, which carries the result)
  with the snapshot taken before any user code ran; a change is reported as that task's
  ``Failure`` and the child stops. This is a tripwire, not a sandbox: code that sets out to forge
  its own task's result from inside the child can get round it, but it cannot reach the parent,
  the report or another task's result.

The child never sends Python objects: the parent decodes JSON and the caller validates each
result. Platforms without ``os.fork`` run the tasks in-process, as before this module existed.
"""

from __future__ import annotations

import json
import os
import select
import signal
import sys
import time
from dataclasses import dataclass
from typing import Any, Callable

DEFAULT_TASK_TIME_LIMIT = 60.0  # seconds of wall clock per task (per finding), enforced by the parent
GPU_BUILD_ALLOWANCE = 300.0  # extra seconds for a GPU step: FlashInfer's JIT build can take minutes
_MAX_LINE = 32 * 2**20  # a result line larger than this is malformed
_POLL = 0.05  # seconds between checks that the child is still alive


@dataclass(frozen=True)
class Failure:
    """A task whose process did not hand back a valid result."""

    kind: str  # exit | signal | timeout | malformed | tampered
    detail: str  # what happened, as a phrase: "ended its process with exit status 0"
    seconds: float = 0.0  # from the task's start to its failure


class Channel:
    """The child's side of the pipe; what a task reports goes through here."""

    def __init__(self, fd: int) -> None:
        # Bound now, before any user code runs: later patches of os/json cannot redirect them.
        self._fd, self._write, self._dumps, self._getpid = fd, os.write, json.dumps, os.getpid
        self._pid = os.getpid()
        self._snapshot = _fingerprint()

    def _send(self, obj: dict) -> None:
        if self._getpid() != self._pid:
            os._exit(0)  # a fork the user's code made carried on with our work: it reports nothing
        data = (self._dumps(obj) + "\n").encode()
        while data:
            data = data[self._write(self._fd, data):]

    def start(self, i: int) -> None:
        self._send({"k": "start", "i": i})

    def extend(self, i: int) -> None:
        """Task ``i`` starts a GPU step: it gets GPU_BUILD_ALLOWANCE more seconds."""
        self._send({"k": "extend", "i": i})

    def result(self, i: int, data: Any) -> None:
        changed = _changed(self._snapshot, _fingerprint())
        if changed:
            self._send({"k": "tampered", "i": i, "names": changed[:8], "n": len(changed)})
            os._exit(0)  # the process is no longer trustworthy: the next task gets a fresh one
        self._send({"k": "result", "i": i, "data": data})

    def end(self) -> None:
        self._send({"k": "end"})


def run_tasks(count: int, child_main: Callable[[int, Channel], None], validate: Callable[[Any], Any],
              time_limit: float = DEFAULT_TASK_TIME_LIMIT) -> list[Any]:
    """Results of tasks ``0..count-1``, each ``validate(data)`` or a ``Failure``.

    ``child_main(first, channel)`` runs in the child: for each task ``i`` from ``first`` on it calls
    ``channel.start(i)``, does the work and calls ``channel.result(i, json_data)``, then
    ``channel.end()``. ``validate`` turns the decoded JSON into the caller's value; it raises
    ValueError/TypeError/KeyError on data it does not accept (the task then fails as malformed).
    """
    out: list[Any] = [None] * count
    done = 0
    while done < count:
        done = _one_child(done, count, child_main, validate, time_limit, out)
    return out


def _one_child(first: int, count: int, child_main, validate, time_limit: float, out: list) -> int:
    """Runs a child for tasks ``first..``; fills ``out`` and returns the next task without a result."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()  # or the child's copy of the buffer could be written twice
        except Exception:  # noqa: BLE001 - a closed or odd stream
            pass
    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        code = 70
        try:
            os.setsid()
            os.close(rfd)
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(null, fd)
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            ch = Channel(wfd)
            child_main(first, ch)
            ch.end()
            code = 0
        finally:
            os._exit(code)
    os.close(wfd)
    pos, started, progressed, ended = first, False, False, False
    task_start = time.monotonic()
    buf = b""
    allowed = time_limit
    deadline = time.monotonic() + allowed
    status: int | None = None
    failure: Failure | None = None
    try:
        while failure is None and not ended:
            left = deadline - time.monotonic()
            if left <= 0:
                failure = Failure("timeout", f"did not finish within {allowed:g} s (the time limit); its processes were killed")
                break
            ready, _, _ = select.select([rfd], [], [], min(left, _POLL))
            chunk = os.read(rfd, 1 << 16) if ready else b""
            if not chunk:
                if status is None:
                    status = _reaped(pid)
                if status is not None or ready:  # exited, or EOF: take what is in the pipe and stop
                    if status is not None:
                        chunk = _drain(rfd)
                    if not chunk:
                        break
            buf += chunk
            if len(buf) > _MAX_LINE and b"\n" not in buf:
                failure = Failure("malformed", "sent more data than a result can be")
                break
            *lines, buf = buf.split(b"\n")
            for line in lines:
                try:
                    msg = json.loads(line)
                    kind, i = msg["k"], msg.get("i")
                except (ValueError, TypeError, KeyError):
                    failure = Failure("malformed", "sent data that is not a result")
                    break
                if kind == "end" and not started and pos == count:
                    ended = True
                elif kind == "start" and i == pos and not started:
                    started, task_start, allowed = True, time.monotonic(), time_limit
                    deadline = task_start + allowed
                elif kind == "extend" and i == pos and started:
                    allowed = time.monotonic() - task_start + time_limit + GPU_BUILD_ALLOWANCE
                    deadline = task_start + allowed
                elif kind == "tampered" and i == pos and started:
                    names = msg.get("names")
                    names = ", ".join(str(n) for n in names) if isinstance(names, list) else "?"
                    more = msg.get("n", 0) - 8 if isinstance(msg.get("n"), int) else 0
                    names += f" and {more} more" if more > 0 else ""
                    out[pos] = Failure("tampered", f"changed attn-lint's own code or data in its process ({names}); "
                                                   "its result was discarded", time.monotonic() - task_start)
                    pos, started, progressed = pos + 1, False, True
                elif kind == "result" and i == pos and started:
                    try:
                        out[pos] = validate(msg.get("data"))
                    except (ValueError, TypeError, KeyError, AttributeError) as exc:
                        failure = Failure("malformed", f"sent a result that does not hold up ({exc})")
                        break
                    pos, started, progressed, allowed = pos + 1, False, True, time_limit
                    deadline = time.monotonic() + allowed
                else:
                    failure = Failure("malformed", f"sent `{kind}` out of turn")
                    break
    finally:
        _kill_group(pid)
        if status is None:
            status = _wait(pid)
        os.close(rfd)
    if ended or pos >= count:
        return count
    if failure is None and (started or not progressed):
        failure = _death(status)
    if failure is not None:
        out[pos] = Failure(failure.kind, failure.detail, time.monotonic() - task_start)
        return pos + 1
    return pos  # stopped between tasks after a tampered one: the rest get a fresh child


def run_in_process(count: int, child_main: Callable[[int, Channel], None], validate) -> list[Any]:
    """Where there is no fork: the same tasks in this process (no isolation), results validated alike."""
    out: list[Any] = [None] * count

    class _Local:
        def start(self, i): pass
        def extend(self, i): pass
        def end(self): pass
        def result(self, i, data): out[i] = validate(json.loads(json.dumps(data)))

    child_main(0, _Local())
    return out


def can_isolate() -> bool:
    return hasattr(os, "fork") and hasattr(os, "killpg")


def _death(status: int | None) -> Failure:
    if status is None:
        return Failure("exit", "ended its process")
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = f"signal {sig}"
        return Failure("signal", f"was killed by {name}")
    return Failure("exit", f"ended its process with exit status {os.WEXITSTATUS(status)}")


def _reaped(pid: int) -> int | None:
    try:
        got, status = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return 0
    return status if got == pid else None


def _wait(pid: int) -> int | None:
    try:
        return os.waitpid(pid, 0)[1]
    except ChildProcessError:
        return None


def _drain(fd: int) -> bytes:
    """What is in the pipe now, without waiting for an EOF a grandchild may never send."""
    data = b""
    while len(data) <= _MAX_LINE:
        ready, _, _ = select.select([fd], [], [], 0)
        if not ready:
            break
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            break
        data += chunk
    return data


def _kill_group(pid: int) -> None:
    """The child and everything it forked (its session's group): SIGKILL, so nothing lingers."""
    for kill in (os.killpg, os.kill):
        try:
            kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


_WATCHED = ("json", "json.encoder", "json.decoder")


def _fingerprint() -> dict[str, tuple]:
    """Identity of every top-level object of attn-lint's modules (functions with their code, the
    entries of classes and dicts) and of the json modules the result travels through."""
    root = __name__.rsplit(".", 2)[0]  # "attn_lint" (or the checkout's package name)
    out: dict[str, tuple] = {}
    for name, mod in list(sys.modules.items()):
        if not (name == root or name.startswith(root + ".") or name in _WATCHED):
            continue
        out[name] = (id(mod),)
        try:
            items = list(vars(mod).items())
        except TypeError:
            continue
        for key, value in items:
            if key.startswith("__"):
                continue  # __warningregistry__ and the like change on their own
            out[f"{name}.{key}"] = _identity(value)
            inner = vars(value).items() if isinstance(value, type) and value.__module__ == name else \
                value.items() if isinstance(value, dict) else ()
            for k, v in list(inner):
                out[f"{name}.{key}[{k!r}]"] = _identity(v)  # a new entry (a cache filling) is fine
    return out


def _identity(value: Any) -> tuple:
    code = getattr(value, "__code__", None)
    if code is not None:
        return (id(value), id(code), id(getattr(value, "__defaults__", None)),
                id(getattr(value, "__kwdefaults__", None)))
    return (id(value),)


def _changed(before: dict[str, tuple], after: dict[str, tuple]) -> list[str]:
    """Names whose identity changed or that went away (new names, e.g. lazy imports, are fine)."""
    return sorted(k for k, v in before.items() if after.get(k) != v)
