"""The resident analyser: `attn-lint --server` keeps the tree in memory between runs.

A one-shot run over a large tree spends most of its time loading every file's summary from the
cache and rebuilding the tree model before it can say anything about the one file that changed.
The server is a background process that keeps summaries, per-module facts (facts.py) and astroid's
parsed modules in memory: a run stats the tree, re-summarises what changed and re-runs the
tree-wide passes. Findings are the same as a one-shot run's; only where the work happens differs.

One server per project root and cache folder. Where it lives (its socket, its lock) depends on
those two only, never on the interpreter or virtualenv that started it: the `attn-lint-server`
pre-commit hook runs attn-lint from pre-commit's own environment, and `attn-lint server status`
or `stop` from the user's must find that server. It holds a lock file that names its pid and
project for as long as it lives, and its parsing workers die with it. Clients reach it over a
Unix socket that only the user can open; it answers one run at a time, sending a heartbeat to
every client waiting for it, and exits after `idle` seconds without a run, on `attn-lint server
stop`, when attn-lint's code changes on disk, when its socket is removed, or when a client of a
different build (another attn-lint version or environment) asks to replace it (`--server`); a
client of another build that did not ask for a server runs in-process and leaves it be. A
client that stalls is dropped after a few seconds; a client whose server goes silent gives up.
Any failure to use it falls back to an in-process run. Its folder is the user's alone (0700) and
its files are opened without following links, so nothing planted there is written through or
trusted; concurrent starts take a start lock, so they spawn one server.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import hashlib
import os
import pickle
import queue
import select
import signal
import socket
import stat
import struct
import subprocess
import sys
import threading
import time
import traceback

from ... import __version__
from ..perfile.cache import Cache, code_digest
from .server_paths import make_private, project_root, server_name, socket_path, state_dir

DEFAULT_IDLE = 1800.0  # seconds without a run before the server exits
QUIET_BEFORE_COLLECTING = 3.0  # seconds without a run before the garbage collector runs
_HEADER = struct.Struct("!Q")
NOT_RUNNING = "no server is running"
_RESULTS_KEPT = 16  # whole-run results kept in memory (one per recent set of files and settings)
HEARTBEAT = 1.0  # seconds between the server's "still working" frames to each waiting client
CLIENT_SILENCE = 15.0  # seconds a client waits for any frame before it runs in-process instead
CONNECTION_STALL = 5.0  # seconds the server waits on a client's reading or writing before dropping it
_WAIT = {"wait": True}  # the heartbeat frame


def _build_key() -> str:
    """This build of attn-lint as the server protocol sees it: the analysis code (TOOL_KEY), the
    server and cache code themselves, the version and the interpreter, as they are on disk now.
    It is checked over the socket; it never names the socket."""
    own = code_digest(("linter/app/server.py", "linter/perfile/cache.py"))
    tool = f"{__version__}-{code_digest()}-{own}"
    return hashlib.blake2b(f"{tool}|{sys.executable}".encode(), digest_size=8).hexdigest()


SERVER_KEY = _build_key()


# --- where the server lives (server_paths.py: a client that finds no socket imports no more) -----


def log_path(cache_dir: str, project: str) -> str:
    return os.path.join(state_dir(cache_dir), server_name(cache_dir, project) + ".log")


def _lock_path(cache_dir: str, project: str) -> str:
    return os.path.join(state_dir(cache_dir), server_name(cache_dir, project) + ".lock")


def _private_file(path: str, flags: int) -> int:
    """A descriptor on `path`, which must be a regular file of the user's (created 0600 with
    O_CREAT). A link is never followed and a FIFO never waited on: something planted at the name
    of a lock or log must not be written through, nor hang the server or its client."""
    try:
        fd = os.open(path, flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, 0o600)
    except OSError as exc:
        why = f"cannot be opened ({exc.strerror})"
        if os.path.islink(path):
            why = "is a link"
        elif os.path.lexists(path) and not os.path.isfile(path):
            why = "is not a regular file"
        raise OSError(f"{path} {why}: not using it for the server") from None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid():
        os.close(fd)
        raise OSError(f"{path} is not a regular file of yours: not using it for the server")
    return fd


def holder(cache_dir: str, project: str) -> int | None:
    """The pid of the server holding the lock of `project` on this cache folder; None when no
    process holds it. The lock, not the socket, says whether a server lives: a socket can be
    removed or stop answering while its server still runs."""
    held = _held(_lock_path(cache_dir, project))
    return held[0] if held else None


def _held(lock_file: str) -> tuple[int, str] | None:
    """(pid, project) written in a lock file some process holds; None when none holds it."""
    import fcntl
    try:  # a lock that is not a plain file of the user's names no server (`stop` kills its pid)
        fh = os.fdopen(_private_file(lock_file, os.O_RDONLY), "r")
    except OSError:
        return None
    with fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            lines = fh.read().splitlines()
            try:
                pid = int(lines[0].strip() or 0) if lines else 0
            except ValueError:
                return None
            return (pid, lines[1] if len(lines) > 1 else "") if pid else None
        fcntl.flock(fh, fcntl.LOCK_UN)
        return None


def running(cache_dir: str) -> list[tuple[int, str]]:
    """(pid, project root) of every server that holds a lock on this cache folder."""
    folder = state_dir(cache_dir)
    try:
        names = sorted(n for n in os.listdir(folder) if n.endswith(".lock"))
    except OSError:
        return []
    return [held for held in (_held(os.path.join(folder, n)) for n in names) if held]


# --- framing -------------------------------------------------------------------------------------
def _send(sock: socket.socket, obj) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    sock.sendall(_HEADER.pack(len(data)) + data)


def _recv_exact(sock: socket.socket, n: int) -> bytes:
    chunks, got = [], 0
    while got < n:
        chunk = sock.recv(min(n - got, 1 << 20))
        if not chunk:
            raise ConnectionError("connection closed mid-message")
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def _recv(sock: socket.socket):
    (n,) = _HEADER.unpack(_recv_exact(sock, _HEADER.size))
    return pickle.loads(_recv_exact(sock, n))


def _reply(sock: socket.socket):
    """The server's answer, past its heartbeats; each frame must come within the socket's timeout."""
    while True:
        reply = _recv(sock)
        if reply != _WAIT:
            return reply


# --- the server ----------------------------------------------------------------------------------
class ResidentCache(Cache):
    """The on-disk cache with the entries it has served kept in memory. Writes still go to disk,
    so a later one-shot run (or a restarted server) starts warm."""

    resident = True
    path_sets_kept = 8  # projects, or a project and its pre-commit subsets

    def __init__(self, directory: str):
        super().__init__(directory)
        self.summaries: dict[str, object] = {}
        self.named: dict[str, object] = {}

    def get_summary(self, digest: str):
        hit = self.summaries.get(digest)
        if hit is None:
            hit = super().get_summary(digest)
            if hit is not None:
                self.summaries[digest] = hit
        return hit

    def in_memory(self, digest: str):
        return self.summaries.get(digest)

    def keep(self, digest: str, value) -> None:
        self.summaries[digest] = value

    def load(self, name: str):
        if name in self.named:
            value = self.named.pop(name)  # re-inserted: the dict's order is the order of last use
            self.named[name] = value
            return value
        value = super().load(name)
        if value is not None:
            self.named[name] = value
        return value

    def store(self, name: str, value) -> None:
        self.named.pop(name, None)
        self.named[name] = value
        super().store(name, value)

    def trim(self) -> None:
        """Keep the results and file maps of the most recent runs, and only the summaries those
        file maps still name."""
        for prefix, kept in (("result-", _RESULTS_KEPT), ("stat-", self.path_sets_kept)):
            names = [k for k in self.named if k.startswith(prefix)]
            for k in names[:-kept]:
                del self.named[k]
        live = set()
        for k, v in self.named.items():
            if k.startswith("stat-") and isinstance(v, dict):
                live.update(entry[1] for entry in v.values())
        for digest in [d for d in self.summaries if d not in live]:
            del self.summaries[digest]


def serve(cache_dir: str, project: str, idle: float = DEFAULT_IDLE) -> int:
    """Run the server of `project` in this process until it has been idle for `idle` seconds.
    Returns 0, or 3 when another server already serves this project and cache folder; raises
    OSError (one line) when its folders or lock are refused (a link, a FIFO, another user's)."""
    project = project_root(project)
    make_private(state_dir(cache_dir))
    # Not truncated when opened: it names the running server until this one holds it.
    lock = os.fdopen(_private_file(_lock_path(cache_dir, project), os.O_RDWR | os.O_CREAT), "r+")
    if not _lock_exclusively(lock.fileno(), 0.25):
        lock.close()
        return 3  # another server holds this project and cache folder: let it serve
    from . import engine  # only now: a server that makes way leaves at once, not after the imports
    lock.truncate(0)
    lock.write(f"{os.getpid()}\n{project}\n")
    lock.flush()
    path = socket_path(cache_dir, project, create=True)
    try:
        os.unlink(path)  # left by a server that was killed: the lock says none is running
    except FileNotFoundError:
        pass
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old_umask = os.umask(0o177)  # the socket is the user's alone: requests are pickles
    try:
        listener.bind(path)
    finally:
        os.umask(old_umask)
    listener.listen(64)
    bound = os.stat(path).st_ino
    # Parsing workers are forked from this process: they must not keep its lock or socket, or a
    # killed server would leave them answering nothing and holding the cache folder.
    os.register_at_fork(after_in_child=lambda: (listener.close(), lock.close()))

    def _stop(signum, frame):
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, _stop)
    cache = ResidentCache(cache_dir)
    waiting = _Waiting()
    threading.Thread(target=_accept, args=(listener, waiting), daemon=True).start()
    threading.Thread(target=waiting.beat, daemon=True).start()
    _log(f"serving {project} with the cache {cache_dir} at {path} (pid {os.getpid()}, {sys.executable}, "
         f"idle limit {idle:.0f} s)")
    last_run = last_check = time.monotonic()
    runs = 0
    collected = True
    # The collector never runs during a run: with hundreds of MB of summaries in memory an
    # automatic collection costs a client a second. It runs once the server has been quiet for a
    # moment (runs come in bursts: an edit loop, a commit's hooks), and what survives is frozen
    # out of later collections; now and then everything is unfrozen so old garbage can go too.
    gc.disable()
    try:
        while True:
            try:
                conn = waiting.queue.get(timeout=1.0)
            except queue.Empty:
                now = time.monotonic()
                if not _still_bound(path, bound):
                    _log("the socket was removed or replaced: exiting")
                    break
                if not collected and now - last_run >= QUIET_BEFORE_COLLECTING:
                    runs += 1
                    if runs % 64 == 0:
                        gc.unfreeze()
                    gc.collect()
                    gc.freeze()
                    collected = True
                if now - last_run >= idle:
                    _log("idle limit reached: exiting")
                    break
                if now - last_check >= 60.0:
                    last_check = now
                    if _build_key() != SERVER_KEY:
                        _log("attn-lint's code changed on disk: exiting (clients of the new code start their own)")
                        break
                continue
            last_run = time.monotonic()
            collected = False
            try:
                if not _handle(conn, cache, engine, waiting, project):
                    break
            finally:
                waiting.done(conn)
    finally:
        listener.close()
        if _still_bound(path, bound):
            try:
                os.unlink(path)
            except OSError:
                pass
        lock.close()  # the lock file stays: removing it would let two servers start at once
    return 0


def _lock_exclusively(fd: int, wait: float) -> bool:
    """Take an exclusive flock on `fd` within `wait` seconds. Tried again for a moment, not once:
    `holder()` takes a shared lock for an instant, and a server starting then must not give up."""
    import fcntl
    deadline = time.monotonic() + wait
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.02)


def _still_bound(path: str, inode: int) -> bool:
    try:
        return os.stat(path).st_ino == inode
    except OSError:
        return False


class _Waiting:
    """Accepted connections: queued for the main thread, and sent a heartbeat every second until
    answered, so a client can tell a busy server from a dead or stopped one."""

    def __init__(self):
        self.queue: queue.Queue = queue.Queue()
        self.lock = threading.Lock()  # held while a frame goes out: frames never interleave
        self.conns: set[socket.socket] = set()

    def add(self, conn: socket.socket) -> None:
        conn.settimeout(CONNECTION_STALL)  # a client that stops reading or writing is dropped
        with self.lock:
            self.conns.add(conn)
        self.queue.put(conn)

    def answering(self, conn: socket.socket) -> None:
        with self.lock:
            self.conns.discard(conn)

    def done(self, conn: socket.socket) -> None:
        self.answering(conn)
        conn.close()

    def beat(self) -> None:
        frame = pickle.dumps(_WAIT)
        frame = _HEADER.pack(len(frame)) + frame
        while True:
            time.sleep(HEARTBEAT)
            with self.lock:
                for conn in list(self.conns):
                    try:
                        conn.sendall(frame)
                    except OSError:
                        self.conns.discard(conn)  # it stopped reading: the answer will fail too


def _accept(listener: socket.socket, waiting: _Waiting) -> None:
    while True:
        try:
            conn, _ = listener.accept()
        except OSError:
            return  # the listener was closed: the server is exiting
        waiting.add(conn)


def _handle(conn: socket.socket, cache: ResidentCache, engine, waiting: _Waiting, project: str) -> bool:
    """Answer one request; False when the server should exit."""
    try:
        request = _recv(conn)
    except (OSError, EOFError, pickle.UnpicklingError, ConnectionError):
        return True  # gone, stalled or garbled: the next client's turn
    op = request.get("op") if isinstance(request, dict) else None

    def answer(reply) -> None:
        waiting.answering(conn)
        try:
            _send(conn, reply)
        except OSError:
            pass  # it went away or stopped reading (CONNECTION_STALL): nothing more to do for it

    if op == "stop":
        answer({"ok": "stopping"})
        return False
    if op == "ping":
        answer({"ok": {"pid": os.getpid(), "key": SERVER_KEY, "summaries": len(cache.summaries),
                       "project": project, "python": sys.executable, "version": __version__}})
        return True
    if request.get("key") != SERVER_KEY:
        if request.get("replace"):
            answer({"stale": SERVER_KEY})
            return False  # a different build asked for a server: make way for one of its own
        answer({"other_build": {"pid": os.getpid(), "python": sys.executable, "version": __version__}})
        return True  # it runs in-process; this server stays for the clients of its own build
    if op != "analyse":
        answer({"error": f"unknown request {op!r}"})
        return True
    start = time.perf_counter()
    try:
        os.chdir(request["cwd"])
        result = engine.analyse(request["paths"], request["settings"], cache=cache)
        result.stats["server"] = True
        # Files travel as plain tuples: thousands of dataclass instances pickle several times slower.
        files = [(f.path, f.display, f.module, f.root) for f in result.files]
        result.files = []
        reply = {"ok": result, "files": files}
    except Exception:  # the client falls back to an in-process run and shows its last line
        reply = {"error": traceback.format_exc(limit=8)}
        _log("a run raised an error:\n" + reply["error"])
    finally:
        os.chdir("/")
    analysed = time.perf_counter()
    cache.trim()
    trimmed = time.perf_counter()
    answer(reply)
    done = time.perf_counter()
    _log(f"run over {request['paths']} in {done - start:.3f} s (analysis {analysed - start:.3f}, "
         f"trim {trimmed - analysed:.3f}, reply {done - trimmed:.3f})")
    return True


def _log(message: str) -> None:
    print(f"{time.strftime('%Y-%m-%d %H:%M:%S')} {message}", file=sys.stderr, flush=True)


# --- the client ----------------------------------------------------------------------------------
def _connect(cache_dir: str, project: str, timeout: float = CLIENT_SILENCE) -> socket.socket | None:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout)  # for the connect, then for each frame: the server beats every second
    try:
        path = socket_path(cache_dir, project)
        # Only a socket of the user's: its answers are unpickled. (Its folder is the user's alone,
        # so nobody else can swap it after this look.)
        st = os.lstat(path)
        if not stat.S_ISSOCK(st.st_mode) or st.st_uid != os.getuid():
            raise OSError(f"{path} is not a socket of yours")
        sock.connect(path)
    except OSError:
        sock.close()
        return None
    return sock


def start(cache_dir: str, project: str, idle: float = DEFAULT_IDLE) -> None:
    """Start a detached server for `project` on `cache_dir` (it exits at once if one is already
    running). Raises OSError (one line) when its folder, lock or log cannot be used."""
    make_private(state_dir(cache_dir))
    log_file = log_path(cache_dir, project)
    try:
        st = os.lstat(log_file)
        if stat.S_ISREG(st.st_mode) and st.st_size > 1 << 20:
            os.replace(log_file, log_file + ".1")  # keep the log small: one old generation
    except OSError:
        pass
    # Checked here too, not only by the server: a socket folder or lock it would refuse fails this
    # start at once, rather than after the wait for a server that never answers.
    socket_path(cache_dir, project, create=True)
    os.close(_private_file(_lock_path(cache_dir, project), os.O_RDWR | os.O_CREAT))
    log = _private_file(log_file, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    # The server runs from `/` (it must not keep a project folder busy), so it is told where this
    # attn_lint was imported from: a checkout used without installing works too.
    import attn_lint
    here = os.path.dirname(os.path.dirname(os.path.abspath(attn_lint.__file__)))
    env = dict(os.environ)
    env["PYTHONPATH"] = here + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    try:
        subprocess.Popen([sys.executable, "-m", "attn_lint", "server", "run", "--cache-dir", cache_dir,
                          "--project", project_root(project), "--idle", str(idle)],
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log, cwd="/", env=env,
                         start_new_session=True, close_fds=True)
    finally:
        os.close(log)


@contextlib.contextmanager
def _starting(cache_dir: str, project: str, wait: float = 2 * CLIENT_SILENCE):
    """Held around "is one running? if not, start it and wait until it answers", so that
    concurrent starts (three `server start`s, a commit's hooks) spawn one server between them.
    The server's own lock cannot do this: each start would see none running and spawn its own,
    the extra ones lingering until they find the lock taken. A starter that hangs past `wait` is
    gone around: at worst that spawns a server that makes way at once."""
    make_private(state_dir(cache_dir))
    fd = _private_file(os.path.join(state_dir(cache_dir), server_name(cache_dir, project) + ".start"),
                       os.O_RDWR | os.O_CREAT)  # O_CLOEXEC: the server it spawns does not keep it
    try:
        _lock_exclusively(fd, wait)
        yield
    finally:
        os.close(fd)


def start_once(cache_dir: str, project: str, idle: float = DEFAULT_IDLE) -> socket.socket | None:
    """A connection to the server of `project`, started when none runs; None when it did not start
    or one runs that does not answer. Raises OSError (one line) when its files cannot be used."""
    with _starting(cache_dir, project):
        sock = _connect(cache_dir, project)  # another starter may have started it while this one waited
        if sock is None and holder(cache_dir, project) is None:
            start(cache_dir, project, idle)
            sock = _ready(cache_dir, project, 15.0)
        return sock


def _ready(cache_dir: str, project: str, wait: float) -> socket.socket | None:
    deadline = time.monotonic() + wait
    while True:
        sock = _connect(cache_dir, project)
        if sock is not None or time.monotonic() > deadline:
            return sock
        time.sleep(0.02)


def analyse(paths: list[str], settings, project: str, idle: float = DEFAULT_IDLE, spawn: bool = True):
    """The engine's Result from the server of `project` (started when none is running, with
    `spawn`), or (None, reason) when the run should happen in this process."""
    if settings.cache_dir is None:
        return None, "the server needs the cache (--no-cache was given)"
    # The server works from `/`; a relative cache folder must mean the same folder to both sides.
    settings = dataclasses.replace(settings, cache_dir=os.path.abspath(settings.cache_dir))
    cache_dir = settings.cache_dir
    try:
        socket_path(cache_dir, project)
    except OSError as exc:
        return None, str(exc)
    for _attempt in range(2):
        sock = _connect(cache_dir, project)
        if sock is None:
            pid = holder(cache_dir, project)
            if pid is not None:  # its socket was removed: it is on its way out
                return None, f"the server (pid {pid}) does not answer on its socket"
            if not spawn:  # its socket is there (the CLI looked) but nothing listens
                return None, _gone(cache_dir, project, 0.0) or NOT_RUNNING
            try:
                sock = start_once(cache_dir, project, idle)
            except OSError as exc:
                return None, str(exc)
            if sock is None:
                return None, f"the server did not start (see {log_path(cache_dir, project)})"
        try:
            with sock:
                _send(sock, {"op": "analyse", "key": SERVER_KEY, "replace": spawn, "cwd": os.getcwd(),
                             "paths": [str(p) for p in paths], "settings": settings})
                # A server that runs answers or beats within a second or two; one that is stopped
                # (^Z, a debugger) never will: say so then, not after the whole silence.
                if not select.select([sock], [], [], 2 * HEARTBEAT)[0]:
                    stopped = _stopped(holder(cache_dir, project))
                    if stopped is not None:
                        return None, f"the server (pid {stopped}) is stopped (a signal or a debugger holds it)"
                reply = _reply(sock)
        except TimeoutError:
            return None, f"the server did not answer for {CLIENT_SILENCE:.0f} s (pid {holder(cache_dir, project)})"
        except (OSError, EOFError, pickle.UnpicklingError, ConnectionError) as exc:
            # Killed: its socket goes now, so later runs are quiet. Its workers hold the lock until
            # they are swept, which on a loaded machine takes more than a second.
            _gone(cache_dir, project, 5.0)
            return None, f"the server failed mid-run ({exc})"
        if "other_build" in reply:  # not asked for a server: leave that build's server be
            return None, NOT_RUNNING
        if "stale" in reply:
            _wait_gone(cache_dir, project)
            continue  # it was another build: it is exiting, start ours
        if "error" in reply:  # the whole traceback is in the server's log
            return None, "the server raised an error: " + reply["error"].strip().splitlines()[-1]
        from ..files.discover import SourceFile
        result = reply["ok"]
        result.files = [SourceFile(*f) for f in reply.get("files", ())]
        return result, None
    return None, "the server kept answering for another build"


def _stopped(pid: int | None) -> int | None:
    """`pid` where that process is stopped (Linux's /proc says `T` or `t`: SIGSTOP, ^Z, a tracer);
    None where it runs, is unknown, or /proc is not there."""
    if pid is None:
        return None
    try:
        with open(f"/proc/{int(pid)}/stat", "rb") as fh:
            state = fh.read(4096).rsplit(b")", 1)[1].split()[0]
    except (OSError, IndexError, ValueError):
        return None
    return pid if state in (b"T", b"t") else None


def _wait_gone(cache_dir: str, project: str, wait: float = 5.0) -> None:
    """Wait for a server that is leaving to let go of its lock (the last thing it does, after
    closing its socket), so that the one started next does not find it still there."""
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline and holder(cache_dir, project) is not None:
        time.sleep(0.05)


def _gone(cache_dir: str, project: str, wait: float) -> str | None:
    """When the server was killed (its socket is left, nothing listens, no process holds its
    lock), remove its socket and say so; None otherwise. The lock is held around the removal, so
    no server starting meanwhile loses its new socket; `wait`: how long a dying server may take
    to let go of it."""
    try:
        path = socket_path(cache_dir, project)
        fd = _private_file(_lock_path(cache_dir, project), os.O_RDONLY)
    except OSError:
        return None
    try:
        if not stat.S_ISSOCK(os.lstat(path).st_mode):
            return None
        sock = _connect(cache_dir, project, timeout=1.0)
        if sock is not None and _answers(sock):  # it lives (it dropped a client, or another one started)
            return None
        if not _lock_exclusively(fd, wait):
            return None
        os.unlink(path)
        return "the server was killed or crashed (the socket it left is removed now)"
    except OSError:
        return None
    finally:
        os.close(fd)


def _answers(sock: socket.socket) -> bool:
    """Whether the server behind a socket that accepted a connection is alive: it answers a ping,
    or sends a heartbeat while busy, or stays silent (unknown: alive). A dying server's listener
    can take a connection in the instant before the kernel closes it; that one ends in EOF."""
    with sock:
        try:
            _send(sock, {"op": "ping"})
            _recv(sock)
        except TimeoutError:
            return True
        except (OSError, EOFError, pickle.UnpicklingError, ConnectionError):
            return False
    return True


def control(cache_dir: str, project: str, op: str, timeout: float = CLIENT_SILENCE):
    """`ping` or `stop` the running server of `project`, whatever build it is; None when none
    answers."""
    sock = _connect(cache_dir, project, timeout)
    if sock is None:
        return None
    try:
        with sock:
            _send(sock, {"op": op})
            return _reply(sock)
    except (OSError, EOFError, pickle.UnpicklingError, ConnectionError):
        return None


def stop(cache_dir: str, project: str, wait: float = 10.0) -> bool:
    """Stop the server of `project`: asked over its socket, or, when it does not answer there
    (stopped, its socket removed), by a signal to the pid its lock names. False when none was
    running."""
    pid = holder(cache_dir, project)
    if control(cache_dir, project, "stop", timeout=3.0) is None:
        if pid is None:
            return False
        for sig in (signal.SIGTERM, signal.SIGCONT):  # SIGCONT: a stopped server must run to exit
            try:
                os.kill(pid, sig)
            except OSError:
                pass
    elif pid is None:
        return True
    deadline = time.monotonic() + wait
    while holder(cache_dir, project) is not None:
        if time.monotonic() > deadline:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
            break
        time.sleep(0.05)
    return True


def stop_all(cache_dir: str) -> list[str]:
    """Stop every server on this cache folder; the projects they served."""
    stopped = []
    for _, project in running(cache_dir):
        if project and stop(cache_dir, project):
            stopped.append(project)
    return stopped
