"""Run the user's code in child processes that attn-lint supervises from outside.

``--verify`` imports the user's modules and calls their methods; a module body can call
``os._exit``, crash the interpreter, fork, ignore SIGALRM and loop, allocate without end, or patch
attn-lint's own functions. So each task runs in a forked child of its own (the code one task
runs can forge that task's result, never another's), and the parent only reads plain JSON lines
from that child's pipe, one result and nothing after it:

* the child starts its own session (process group), so on a timeout ``os.killpg`` takes its forked
  grandchildren with it; the group is killed after every task;
* on Linux, nothing the child started outlives the task, even a grandchild that left the group
  with ``setsid()``: while tasks run, attn-lint is a child subreaper (``PR_SET_CHILD_SUBREAPER``),
  so the orphans of the child's tree become attn-lint's children instead of init's, and after the
  group is killed every process that became attn-lint's child during the task (outside
  attn-lint's own session, so never one of its own helpers) is killed and reaped, round after
  round, until none is left. Elsewhere (macOS, the BSDs: no subreaper, no /proc) only the process
  group is killed: a grandchild that called ``setsid()`` escapes it. Anywhere, processes the code
  has another service start (systemd-run, at, a container daemon) are not its descendants, and
  set-user-ID programs it runs (sudo) cannot be signalled: those are beyond reach;
* the child's address space is capped (``RLIMIT_AS``, ``memory_limit`` bytes) before any user code
  runs, unless the caller turns the cap off (a GPU step: CUDA reserves far more virtual address
  space than it uses); an allocation past it raises MemoryError, and a task whose result reports
  one, or that one ends, fails as ``memory``. On Linux the parent also sums the resident memory of
  the child's processes (at most every 0.2 s) and kills them all past the same limit: this is the
  only cap when the address space is not capped, and it covers forks, each capped on its own.
  Without /proc there is no watchdog (and macOS does not enforce RLIMIT_AS);
* the deadline is kept by the parent (``select`` with a timeout, the child's exit seen through
  ``waitpid``), never by waiting for EOF on a pipe that a grandchild may hold open;
* a task that does not finish gets a ``Failure`` saying what happened to its process (the exit
  status, the signal, the time or memory limit, malformed data);
* the child's fds 0-2 are /dev/null, so nothing it writes reaches attn-lint's own output;
* after each task the child compares attn-lint's modules (and ``json``, which carries the result)
  with the snapshot taken before any user code ran; a change is reported as that task's
  ``Failure``. This is a tripwire, not a sandbox: code that sets out to forge its own task's
  result from inside the child can get round it, but it cannot reach the parent, the report or
  another task's result;
* a child may ``ask`` the parent for work shared between tasks (a pairing's check, run by the
  parent in a child of its own): the task's clock stops while the parent answers.

The child never sends Python objects: the parent decodes JSON and the caller validates each
result. Platforms without ``os.fork`` run the tasks in-process, as before this module existed.
"""

from __future__ import annotations

import json
import os
import re
import select
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..linter.report.printable import printable

try:
    import resource
except ImportError:  # not a Unix
    resource = None  # type: ignore[assignment]

DEFAULT_TASK_TIME_LIMIT = 60.0  # seconds of wall clock per task (per finding), enforced by the parent
GPU_BUILD_ALLOWANCE = 300.0  # extra seconds for a GPU step: FlashInfer's JIT build can take minutes
# Bytes per child: its address space (RLIMIT_AS) and the resident memory of its processes. A
# verify child over all of sglang 0.5.19 with torch 2.13 (CPU) peaked at 1.5 GiB of address space
# (0.9 GiB resident); each of torch's threads can add a 64 MiB malloc arena and an 8 MiB stack,
# about 9 GiB more on a 128-core host (estimated). 16 GiB leaves room for that and still stops a
# runaway allocation long before it takes a workstation down.
DEFAULT_MEMORY_LIMIT = 16 * 2**30
_MAX_LINE = 32 * 2**20  # a result line larger than this is malformed
_POLL = 0.05  # seconds between checks that the child is still alive
_MEMORY_POLL = 0.2  # seconds between sums of the child's resident memory (a scan of /proc)
_SWEEP_ROUNDS = 200  # rounds of killing the orphans of a task; a round ends when one finds none
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


@dataclass(frozen=True)
class Failure:
    """A task whose process did not hand back a valid result."""

    kind: str  # exit | signal | timeout | memory | malformed | tampered
    detail: str  # what happened, as a phrase: "ended its process with exit status 0"
    seconds: float = 0.0  # from the task's start to its failure


class Channel:
    """The child's side of the pipe; what a task reports goes through here."""

    def __init__(self, fd: int, replies: int = -1) -> None:
        # Bound now, before any user code runs: later patches of os/json cannot redirect them.
        self._fd, self._write, self._dumps, self._getpid, self._exit = fd, os.write, json.dumps, os.getpid, os._exit
        self._replies, self._read, self._loads = replies, os.read, json.loads
        self._pid = os.getpid()
        self._snapshot = _fingerprint()
        self._memory_error = re.compile(r"\bMemoryError\b").search  # not torch's OutOfMemoryError
        self.current = 0  # the task under way or next (for a MemoryError that ends the child)
        self.capped = False  # the address space is capped: a MemoryError means the limit was hit

    def _send(self, obj: dict) -> None:
        if self._getpid() != self._pid:
            os._exit(0)  # a fork the user's code made carried on with our work: it reports nothing
        data = (self._dumps(obj) + "\n").encode()
        while data:
            data = data[self._write(self._fd, data):]

    def settled(self) -> None:
        """attn-lint's own setup in the child is done (no user code has run yet): what it set is
        part of the state the tripwire holds it to."""
        self._snapshot = _fingerprint()

    def start(self, i: int) -> None:
        self.current = i
        self._send({"k": "start", "i": i})

    def extend(self, i: int) -> None:
        """Task ``i`` starts a GPU step: it gets GPU_BUILD_ALLOWANCE more seconds."""
        self._send({"k": "extend", "i": i})

    def ask(self, i: int, question: Any) -> Any:
        """What the parent's `answer` says to `question` (JSON both ways): work the parent has run
        in a process of its own and shares between tasks. Task ``i``'s clock stops meanwhile."""
        self._send({"k": "ask", "i": i, "q": question})
        data = b""
        while not data.endswith(b"\n"):
            chunk = self._read(self._replies, 1 << 16)
            if not chunk or len(data) > _MAX_LINE:
                self._exit(0)  # the parent stopped answering: nothing left to do here
            data += chunk
        return self._loads(data)

    def result(self, i: int, data: Any) -> None:
        changed = _changed(self._snapshot, _fingerprint())
        if changed:
            self._send({"k": "tampered", "i": i, "names": changed[:8], "n": len(changed)})
            os._exit(0)  # the process is no longer trustworthy: the next task gets a fresh one
        # The user's code runs under `except BaseException` handlers that turn what it raised into
        # the result's text, so a failed allocation shows only there. Under the cap it means the
        # limit was hit, and the result is then not evidence of anything.
        if self.capped and self._memory_error(self._dumps(data)):
            self.out_of_memory(i)
        self._send({"k": "result", "i": i, "data": data})
        self._exit(0)  # one task per process: the next one's result is out of this one's reach

    def out_of_memory(self, i: int) -> None:
        """Task ``i`` hit the address-space cap."""
        self._send({"k": "memory", "i": i})
        self._exit(0)

    def end(self) -> None:
        self._send({"k": "end"})


def run_tasks(count: int, child_main: Callable[[int, Channel], None], validate: Callable[[Any], Any],
              time_limit: float = DEFAULT_TASK_TIME_LIMIT, memory_limit: int | None = DEFAULT_MEMORY_LIMIT,
              cap_address_space: bool = True, answer: Callable[[Any], Any] | None = None) -> list[Any]:
    """Results of tasks ``0..count-1``, each ``validate(data)`` or a ``Failure``.

    ``child_main(first, channel)`` runs in the child: for each task ``i`` from ``first`` on it calls
    ``channel.start(i)``, does the work and calls ``channel.result(i, json_data)``, then
    ``channel.end()``. ``validate`` turns the decoded JSON into the caller's value; it raises
    ValueError/TypeError/KeyError on data it does not accept (the task then fails as malformed).
    ``memory_limit``: bytes (None: no limit), the child's address space unless ``cap_address_space``
    is False, and the resident memory of its processes, watched from here (Linux).
    ``answer(question)``: the parent's reply to a child's ``Channel.ask`` (JSON in, JSON out; it
    may raise ValueError/TypeError/KeyError for a question it does not take).

    Each task runs in a process of its own: code a task runs can forge that task's result, never
    another's, whose process and pipe it cannot reach.
    """
    out: list[Any] = [None] * count
    done = 0
    # Without /proc the orphans could not be found and swept up: leave them to init, as before.
    was_reaper = _subreaper(True) if os.path.exists("/proc/self/stat") else None
    try:
        while done < count:
            done = _one_child(done, count, child_main, validate, time_limit, out, memory_limit,
                              cap_address_space, answer)
    finally:
        if was_reaper is False:
            _subreaper(False)
    return out


def _one_child(first: int, count: int, child_main, validate, time_limit: float, out: list,
               memory_limit: int | None = None, cap_address_space: bool = True, answer=None) -> int:
    """Runs a child for task ``first``; fills ``out`` and returns the next task without a result."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()  # or the child's copy of the buffer could be written twice
        except Exception:
            pass
    before = _our_children()  # what to leave alone when the task's orphans are swept up
    rfd, wfd = os.pipe()
    reply_r, reply_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        code = 70
        try:
            os.setsid()
            os.close(rfd)
            os.close(reply_w)
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(null, fd)
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            ch = Channel(wfd, reply_r)
            ch.current = first
            if memory_limit and cap_address_space:
                ch.capped = _cap_address_space(memory_limit)
            try:
                child_main(first, ch)
            except MemoryError:
                if ch.capped:
                    ch.out_of_memory(ch.current)
                raise
            ch.end()
            code = 0
        finally:
            os._exit(code)
    os.close(wfd)
    os.close(reply_r)
    watch = bool(memory_limit) and before is not None
    watch_limit = memory_limit or 0
    next_watch = time.monotonic() + _MEMORY_POLL
    pos, started, progressed, ended = first, False, False, False
    task_start = time.monotonic()
    buf = b""
    allowed = time_limit
    deadline = time.monotonic() + allowed
    status: int | None = None
    failure: Failure | None = None
    try:
        while failure is None and not ended and not progressed:
            left = deadline - time.monotonic()
            if left <= 0:
                failure = Failure("timeout", f"did not finish within {allowed:g} s (the time limit); "
                                             "its processes were killed")
                break
            if watch and time.monotonic() >= next_watch:
                next_watch = time.monotonic() + _MEMORY_POLL
                if _resident(before) > watch_limit:
                    failure = Failure("memory", f"used more than {size_text(watch_limit)} of memory (the limit, "
                                                "--verify-memory-limit); its processes were killed")
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
                if progressed:  # a child serves one task: whatever it sends after that is not heard
                    break
                try:
                    msg = json.loads(line)
                    kind, i = msg["k"], msg.get("i")
                except (ValueError, TypeError, KeyError, AttributeError):
                    failure = Failure("malformed", "sent data that is not a result")
                    break
                if kind != "end" and (pos >= count or i != pos):
                    failure = Failure("malformed", f"sent `{printable(str(kind))[:40]}` out of turn")
                    break
                if kind == "end" and not started and pos == count:
                    ended = True
                elif kind == "start" and i == pos and not started:
                    started, task_start, allowed = True, time.monotonic(), time_limit
                    deadline = task_start + allowed
                    watch_limit = memory_limit or 0
                elif kind == "ask" and started and answer is not None:
                    asked = time.monotonic()
                    try:
                        reply = {"ok": answer(msg.get("q"))}
                    except (ValueError, TypeError, KeyError, AttributeError) as exc:
                        reply = {"error": _one_line_text(exc)}
                    if not _write_all(reply_w, (json.dumps(reply) + "\n").encode(), deadline - asked):
                        failure = Failure("timeout", "did not read the answer it asked for")
                        break
                    deadline += time.monotonic() - asked  # its clock stood still meanwhile
                elif kind == "extend" and i == pos and started:
                    allowed = time.monotonic() - task_start + time_limit + GPU_BUILD_ALLOWANCE
                    deadline = task_start + allowed
                    # A GPU step may build FlashInfer's kernels: a compiler per core, each with
                    # a GiB or more resident, is the build and not a runaway.
                    watch_limit = max(watch_limit, _build_room())
                elif kind == "tampered" and i == pos and started:
                    names = msg.get("names")
                    names = ", ".join(str(n) for n in names) if isinstance(names, list) else "?"
                    more = msg.get("n", 0) - 8 if isinstance(msg.get("n"), int) else 0
                    names += f" and {more} more" if more > 0 else ""
                    out[pos] = Failure("tampered", f"changed attn-lint's own code or data in its process ({names}); "
                                                   "its result was discarded", time.monotonic() - task_start)
                    pos, started, progressed = pos + 1, False, True
                elif kind == "memory" and i == pos:
                    out[pos] = Failure("memory", f"ran out of memory: an allocation failed at the "
                                                 f"{size_text(memory_limit or 0)} limit (--verify-memory-limit)",
                                       time.monotonic() - task_start)
                    pos, started, progressed, allowed = pos + 1, False, True, time_limit
                    deadline = time.monotonic() + allowed
                elif kind == "result" and i == pos and started:
                    try:
                        out[pos] = validate(msg.get("data"))
                    except (ValueError, TypeError, KeyError, AttributeError) as exc:
                        failure = Failure("malformed", f"sent a result that does not hold up ({exc})")
                        break
                    pos, started, progressed, allowed = pos + 1, False, True, time_limit
                    deadline = time.monotonic() + allowed
                else:
                    failure = Failure("malformed", f"sent `{printable(str(kind))[:40]}` out of turn")
                    break
    finally:
        _kill_group(pid)
        if status is None:
            status = _wait(pid)
        os.close(rfd)
        os.close(reply_w)
        if before is not None:
            _sweep(before)
    if ended or pos >= count:
        return count
    if failure is None and (started or not progressed):
        failure = _death(status)
    if failure is not None:
        out[pos] = Failure(failure.kind, failure.detail, time.monotonic() - task_start)
        return pos + 1
    return pos  # stopped between tasks after a tampered one: the rest get a fresh child


def _write_all(fd: int, data: bytes, seconds: float) -> bool:
    """Write all of `data` to a pipe whose reader may never read: False past `seconds`."""
    end = time.monotonic() + max(seconds, 0.0)
    os.set_blocking(fd, False)
    while data:
        left = end - time.monotonic()
        if left <= 0 or not select.select([], [fd], [], left)[1]:
            return False
        try:
            data = data[os.write(fd, data):]
        except BlockingIOError:
            continue
        except OSError:
            return False
    return True


def _one_line_text(exc: BaseException) -> str:
    from .loader import one_line  # (the loader only where a question is refused: the CLI imports this module)
    return one_line(exc)[:300]


def run_in_process(count: int, child_main: Callable[[int, Channel], None], validate, answer=None) -> list[Any]:
    """Where there is no fork: the same tasks in this process (no isolation), results validated alike."""
    out: list[Any] = [None] * count

    class _Local:
        def start(self, i): pass
        def extend(self, i): pass
        def end(self): pass
        def result(self, i, data): out[i] = validate(json.loads(json.dumps(data)))

        def ask(self, i, question):
            try:
                return json.loads(json.dumps({"ok": answer(question)}))
            except (ValueError, TypeError, KeyError, AttributeError) as exc:
                return {"error": _one_line_text(exc)}

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


def _kill_group(pid: int, group: int | None = None) -> bool:
    """SIGKILL to ``pid`` and its process group (by default the one ``pid`` leads: the child's,
    which its forks share), so nothing lingers. False if ``pid`` itself could not be signalled."""
    try:
        os.killpg(pid if group is None else group, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    except PermissionError:
        return False
    return True


_UNITS = {"": 1, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}


def parse_size(text: str, error: Callable[[str], Exception] = ValueError) -> int | None:
    """``--verify-memory-limit``: bytes from ``4G``, ``512M``, ``8GiB``, ``1.5g``, ``1000000`` (binary
    units, a trailing ``B`` or ``iB`` allowed), or None for ``none`` / ``0`` (no limit). Raises
    ``error(message)`` on anything else (the CLI makes it click's BadParameter: a usage error)."""
    if str(text).strip().lower() == "none":
        return None
    m = re.fullmatch(r"\s*(\d+(?:\.\d*)?|\.\d+)\s*([kmgt]?)(?:i?b)?\s*", str(text), re.IGNORECASE)
    number = float(m.group(1)) if m else -1.0
    if number == 0:
        return None
    size = int(number * _UNITS[m.group(2).lower()]) if m else 0
    if size < 1 or (m and not m.group(2) and "." in m.group(1)):  # no fractions of a byte
        raise error(f"{text!r} is not a size: give e.g. 4G, 512M, 8GiB, a number of bytes, or none")
    return size


def size_text(n: int) -> str:
    """4294967296 -> '4 GiB'."""
    for unit, name in ((2**40, "TiB"), (2**30, "GiB"), (2**20, "MiB"), (2**10, "KiB")):
        if n >= unit:
            return f"{round(n / unit, 2):g} {name}"
    return f"{n} bytes"


def _build_room() -> int:
    """The resident memory a GPU step may use while it compiles: three quarters of the machine's."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * _PAGE * 3 // 4
    except (ValueError, OSError, AttributeError):
        return 0


def _cap_address_space(limit: int) -> bool:
    """In the child, before any user code: RLIMIT_AS (soft and hard, so the code cannot lift it)."""
    if resource is None:
        return False
    try:
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        if hard != resource.RLIM_INFINITY:
            limit = min(limit, hard)  # never ask for more than the user's own shell allows
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    except (ValueError, OSError):  # macOS refuses some values; the watchdog (Linux) still applies
        return False
    return True


_PR_SET_CHILD_SUBREAPER, _PR_GET_CHILD_SUBREAPER = 36, 37


def _subreaper(on: bool) -> bool | None:
    """Makes this process (Linux) the reaper of its descendants' orphans, or stops; returns the
    previous setting, or None where there is no such thing."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        was = ctypes.c_int(0)
        if libc.prctl(_PR_GET_CHILD_SUBREAPER, ctypes.byref(was), 0, 0, 0) != 0 or \
                libc.prctl(_PR_SET_CHILD_SUBREAPER, int(on), 0, 0, 0) != 0:
            return None
    except (OSError, AttributeError):
        return None
    return bool(was.value)


def _processes() -> dict[int, tuple[int, int, int, int]] | None:
    """pid -> (parent pid, process group, session, resident bytes) of every process, from /proc;
    None without /proc (macOS, the BSDs)."""
    try:
        names = os.listdir("/proc")
    except OSError:
        return None
    out = {}
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                stat = fh.read()
            # The second field is the command name in parentheses, which may itself hold spaces and
            # parentheses (the code under verification chooses it): the fields follow the last ")".
            f = stat[stat.rindex(b")") + 2:].split()
            out[int(name)] = (int(f[1]), int(f[2]), int(f[3]), int(f[21]) * _PAGE)
        except (OSError, ValueError, IndexError):
            continue  # it ended meanwhile
    return out


def _our_children() -> set[int] | None:
    table = _processes()
    if table is None:
        return None
    me = os.getpid()
    return {pid for pid, (ppid, *_) in table.items() if ppid == me}


def _strays(table: dict, before: set[int]) -> list[int]:
    """This process's children that were not its children when the task started: the task's
    child and, through the subreaper, the orphans of its tree. Those in attn-lint's own session
    are left alone: the child started a session of its own, and no descendant of it can join
    attn-lint's, so those can only be orphans of attn-lint's own helpers."""
    me, own_session = os.getpid(), os.getsid(0)
    return [pid for pid, (ppid, _, sid, _) in table.items()
            if ppid == me and pid not in before and sid != own_session]


def _resident(before: set[int]) -> int:
    """Resident bytes of the task's processes: the strays and all their descendants (pages shared
    between them, those of the fork included, count once per process)."""
    table = _processes() or {}
    children: dict[int, list[int]] = {}
    for pid, (ppid, *_) in table.items():
        children.setdefault(ppid, []).append(pid)
    todo, seen, total = _strays(table, before), set(), 0
    while todo:
        pid = todo.pop()
        if pid not in seen:
            seen.add(pid)
            total += table[pid][3]
            todo.extend(children.get(pid, ()))
    return total


def _sweep(before: set[int]) -> None:
    """Kill and reap the task's orphans, round after round: killing one re-parents its own
    children to this process (the subreaper), and the next round finds them."""
    spared: set[int] = set()  # set-user-ID programs the code ran (sudo): not ours to kill or wait for
    for _ in range(_SWEEP_ROUNDS):
        table = _processes() or {}
        strays = [pid for pid in _strays(table, before) if pid not in spared]
        if not strays:
            return
        killed = []
        for pid in strays:
            # Its group too, which it may share with children of its own. While it is our
            # unreaped child its group id cannot be reused, so this reaches only the task's tree.
            if _kill_group(pid, table[pid][1]):
                killed.append(pid)
            else:
                spared.add(pid)
        for pid in killed:
            _wait(pid)


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
                if isinstance(value, dict) and _ours(v, root):
                    # An object of ours a table holds (a rule in RULES_BY_CODE): the behaviour the
                    # run asks it for lives in its attributes, and one added there is a change too.
                    out[f"{name}.{key}[{k!r}].__dict__"] = tuple(sorted(
                        (a, _identity(x)) for a, x in vars(v).items()))
    return out


def _ours(value: Any, root: str) -> bool:
    """An instance (not a class, function or module) of a class attn-lint defines, with attributes."""
    kind = type(value)
    return hasattr(value, "__dict__") and not isinstance(value, type) and not hasattr(value, "__code__") \
        and (kind.__module__ == root or kind.__module__.startswith(root + "."))


def _identity(value: Any) -> tuple:
    code = getattr(value, "__code__", None)
    if code is not None:
        return (id(value), id(code), id(getattr(value, "__defaults__", None)),
                id(getattr(value, "__kwdefaults__", None)))
    return (id(value),)


def _changed(before: dict[str, tuple], after: dict[str, tuple]) -> list[str]:
    """Names whose identity changed or that went away (new names, e.g. lazy imports, are fine)."""
    return sorted(k for k, v in before.items() if after.get(k) != v)
