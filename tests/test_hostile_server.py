"""The resident server where the docs say more than the code did: its folders
are 0700 whatever the umask or an older folder's mode; every fallback from a server that was asked
for or found says so in one line; concurrent starts spawn one server; nothing planted at its lock
or log is written through, waited on or trusted. Each test runs the CLI as a subprocess, with its
cache and config folders under tmp_path and `CI` unset (the CLI never uses a server under CI)."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time

import pytest

from attn_lint.linter.app import server
from attn_lint.linter.app.server_paths import state_dir

pytestmark = pytest.mark.skipif(not hasattr(socket, "AF_UNIX") or not os.path.isdir("/proc/self"),
                                reason="the server needs Unix sockets; these tests read processes from /proc")

NOTE = "attn-lint: running without the server: "


class Home:
    """A project of its own (pyproject.toml with [tool.attn-lint]) and the environment its CLI runs in."""

    def __init__(self, tmp_path, short):
        self.project = tmp_path / "proj"
        (self.project / "pkg").mkdir(parents=True)
        (self.project / "pyproject.toml").write_text('[tool.attn-lint]\nsrc = ["pkg"]\n')
        (self.project / "pkg" / "__init__.py").write_text("")
        (self.project / "pkg" / "a.py").write_text("class A:\n    def f(self):\n        return 1\n")
        self.root = os.path.realpath(self.project)
        self.cache = str(tmp_path / "xdg-cache" / "attn-lint")  # the default cache under XDG_CACHE_HOME
        self.env = {k: v for k, v in os.environ.items() if k != "CI"}
        # TMPDIR: where a socket whose path would be too long goes; per test, so no test meets another's.
        self.env.update(XDG_CACHE_HOME=str(tmp_path / "xdg-cache"), XDG_CONFIG_HOME=str(tmp_path / "xdg-config"),
                        TMPDIR=short)
        self.caches = {self.cache}

    def cli(self, *args, timeout=60):
        return subprocess.run([sys.executable, "-m", "attn_lint", *map(str, args)], capture_output=True, text=True,
                              env=self.env, cwd=self.project, timeout=timeout)

    def popen(self, *args):
        return subprocess.Popen([sys.executable, "-m", "attn_lint", *map(str, args)], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=self.env, cwd=self.project)

    def state(self, cache=None) -> str:
        return state_dir(cache or self.cache)

    def socket_file(self, cache=None) -> str:
        return server.socket_path(cache or self.cache, self.root)

    def servers(self, cache=None) -> set[int]:
        """The pids of `attn-lint server run` processes on this cache folder, from their command lines."""
        want = (cache or self.cache).encode()
        found = set()
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    with open(f"/proc/{entry}/cmdline", "rb") as fh:
                        argv = fh.read().split(b"\0")
                except OSError:
                    continue
                if b"attn_lint" in argv and b"run" in argv and want in argv:
                    found.add(int(entry))
        return found


@pytest.fixture
def home(tmp_path, monkeypatch):
    short = tempfile.mkdtemp(prefix="al-", dir="/tmp")
    monkeypatch.setattr(tempfile, "tempdir", short)  # this process finds the sockets where the CLI puts them
    h = Home(tmp_path, short)
    try:
        yield h
    finally:
        for cache in h.caches:
            try:
                h.cli("server", "stop", "--all", "--cache-dir", cache, timeout=30)
            except subprocess.TimeoutExpired:  # an older build hangs on a FIFO planted at a lock
                pass
            _kill(h.servers(cache))
        shutil.rmtree(short, ignore_errors=True)


def _kill(pids) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def _wait_until(condition, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.02)


def _mode(path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def _one_note(proc) -> str:
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(NOTE), proc.stderr
    return lines[0]


def _started(h, *args) -> int:
    start = h.cli("server", "start", *args)
    assert start.returncode == 0, start.stdout + start.stderr
    cache = args[args.index("--cache-dir") + 1] if "--cache-dir" in args else h.cache
    pid = server.holder(cache, h.root)
    assert pid is not None
    return pid


# --- 1. the server's folders are 0700 --------------------------------------------------------------
@pytest.mark.parametrize("umask", [0o022, 0o002], ids=["umask022", "umask002"])
def test_the_state_folder_is_made_0700_whatever_the_umask(home, umask):
    old = os.umask(umask)  # inherited by the CLI and the server it spawns
    try:
        proc = home.cli("--server", "--format", "json")
    finally:
        os.umask(old)
    assert proc.returncode == 0 and json.loads(proc.stdout)["stats"].get("server") is True, proc.stderr
    assert _mode(home.state()) == 0o700
    assert _mode(os.path.dirname(home.socket_file())) == 0o700


def test_a_looser_folder_of_yours_is_tightened(home):
    os.makedirs(home.state(), mode=0o755)  # as an older attn-lint made it
    os.chmod(home.state(), 0o755)
    _started(home)
    assert _mode(home.state()) == 0o700
    # The long-path fallback folder in the temporary folder too.
    deep = os.path.join(str(home.project.parent), "d" * 60, "e" * 60)
    home.caches.add(deep)
    fallback = os.path.dirname(server.socket_path(deep, home.root))
    assert not fallback.startswith(deep)
    os.makedirs(fallback, exist_ok=True)
    os.chmod(fallback, 0o755)
    _started(home, "--cache-dir", deep)
    assert _mode(fallback) == 0o700 and _mode(state_dir(deep)) == 0o700


def test_a_linked_state_folder_is_refused_in_one_line(home, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    os.makedirs(home.cache)
    os.symlink(elsewhere, home.state())
    for args in (("server", "start"), ("server", "run", "--idle", "1")):
        proc = home.cli(*args)
        assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1, proc.stderr
        assert proc.stderr.startswith("attn-lint: ") and "Traceback" not in proc.stderr
    assert list(elsewhere.iterdir()) == [] and not home.servers()


# --- 2. one line for every fallback from a server asked for or found ---------------------------------
def test_a_server_killed_while_a_client_waits_is_noted_once(home):
    # Killed before the client connects: its socket is left, nothing listens.
    pid = _started(home)
    os.kill(pid, signal.SIGKILL)
    _wait_until(lambda: server.holder(home.cache, home.root) is None, 10, "the killed server kept its lock")
    assert os.path.exists(home.socket_file())
    proc = home.cli("--format", "json")
    assert proc.returncode == 0 and "killed" in _one_note(proc)
    again = home.cli("--format", "json")  # said once: the socket it left is gone
    assert again.returncode == 0 and again.stderr == "", again.stderr

    # Killed while the client waits on it: stopped first, so the client is surely connected.
    pid = _started(home)
    os.kill(pid, signal.SIGSTOP)
    try:
        path = home.socket_file()

        def naming_the_socket() -> int:  # the listener, its open connections and those pending
            with open("/proc/net/unix") as fh:
                return sum(line.rstrip().endswith(" " + path) for line in fh)
        before = naming_the_socket()  # stopped: nothing of the server's changes now
        client = home.popen("--format", "json")
        _wait_until(lambda: naming_the_socket() > before, 30, "the client never connected")
        os.kill(pid, signal.SIGKILL)
        out, err = client.communicate(timeout=60)
    finally:
        _kill([pid])
    proc = subprocess.CompletedProcess(client.args, client.returncode, out, err)
    assert client.returncode == 0 and "mid-run" in _one_note(proc)
    again = home.cli("--format", "json")
    assert again.returncode == 0 and again.stderr == "", again.stderr


def test_server_asked_for_without_a_cache_is_noted_once(home):
    proc = home.cli("--server", "--no-cache")
    assert proc.returncode == 0 and "--no-cache" in _one_note(proc)
    # A repository's own `server = true` asks for nothing: it is noted, never started.
    (home.project / "pyproject.toml").write_text('[tool.attn-lint]\nsrc = ["pkg"]\nserver = true\n')
    proc = home.cli("--no-cache")
    assert proc.returncode == 0 and len(proc.stderr.splitlines()) == 1
    assert "does not start the server" in proc.stderr
    assert home.cli("--no-cache", "--no-server").stderr == ""
    (home.project / "pyproject.toml").write_text('[tool.attn-lint]\nsrc = ["pkg"]\n')
    assert home.cli("--no-cache").stderr == ""  # none asked for, none found: nothing said


def test_a_server_folder_others_can_write_is_noted_by_a_plain_run(home):
    folder = os.path.dirname(home.socket_file())  # the state folder, or the one in TMPDIR for a long path
    os.makedirs(folder)
    os.chmod(folder, 0o777)
    proc = home.cli("--format", "json")
    assert proc.returncode == 0 and "written by others" in _one_note(proc)
    assert _mode(folder) == 0o777  # a plain run changes nothing


# --- 3. one server per project and cache folder, however many start at once ------------------------
@pytest.mark.parametrize("how", [("server", "start"), ("--server", "--format", "json")])
def test_concurrent_starts_spawn_one_server(home, how):
    # Each server spawned is held stopped for a moment, as on a busy machine, so every start looks
    # for a running server before any could answer: only the start lock keeps them to one.
    starters = [home.popen(*how) for _ in range(3)]
    seen: set[int] = set()
    held: set[int] = set()
    release = time.monotonic() + 1.5
    deadline = time.monotonic() + 60
    try:
        while any(p.poll() is None for p in starters) or time.monotonic() < release + 1.0:
            new = home.servers() - seen
            seen |= new
            if time.monotonic() < release:
                held |= new
                for pid in new:
                    os.kill(pid, signal.SIGSTOP)
            else:
                for pid in held:
                    os.kill(pid, signal.SIGCONT)
                held.clear()
            assert time.monotonic() < deadline, "the starts did not finish"
            time.sleep(0.01)
    finally:
        for pid in held:
            os.kill(pid, signal.SIGCONT)
    for p in starters:
        out, err = p.communicate()
        assert p.returncode == 0 and NOTE not in err, err
    assert len(seen) == 1, f"{len(seen)} servers were spawned"
    assert [p for p, _ in server.running(home.cache)] == list(seen)


# --- 4. nothing planted at the lock or the log is written through, waited on or trusted -------------
@pytest.mark.parametrize("kind", ["link", "fifo"])
@pytest.mark.parametrize("which", ["lock", "log"])
def test_a_planted_lock_or_log_is_refused_in_one_line(home, tmp_path, which, kind):
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    os.makedirs(home.state(), mode=0o700)
    planted = (server.log_path if which == "log" else server._lock_path)(home.cache, home.root)
    if kind == "link":
        os.symlink(victim, planted)
    else:
        os.mkfifo(planted)
    commands = [("server", "start"), ("--server", "--format", "json")]
    if which == "lock":
        commands.append(("server", "run", "--idle", "1"))
    for args in commands:
        try:
            proc = home.cli(*args, timeout=10)
        except subprocess.TimeoutExpired:
            pytest.fail(f"`attn-lint {' '.join(args)}` hung on a {kind} at the {which}")
        assert "Traceback" not in proc.stderr and len(proc.stderr.splitlines()) == 1, proc.stderr
        if args[0] == "--server":  # the run happens in-process, and says why
            assert proc.returncode == 0 and planted in _one_note(proc)
        else:
            assert proc.returncode == 2 and planted in proc.stderr, proc.stderr
    assert victim.read_text() == "precious\n"
    assert stat.S_ISLNK(os.lstat(planted).st_mode) if kind == "link" else stat.S_ISFIFO(os.lstat(planted).st_mode)
    assert not home.servers()


def test_stop_never_signals_a_pid_a_planted_lock_names(home, tmp_path):
    bystander = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    victim = tmp_path / "held"
    victim.write_text(f"{bystander.pid}\n{home.root}\n")
    os.makedirs(home.state(), mode=0o700)
    os.symlink(victim, server._lock_path(home.cache, home.root))
    try:
        with open(victim) as held:
            fcntl.flock(held, fcntl.LOCK_EX)  # as a running server holds its lock
            stop = home.cli("server", "stop")
            status = home.cli("server", "status")
        assert stop.returncode == 0 and "no server is running" in stop.stdout, stop.stdout + stop.stderr
        assert status.returncode == 1 and "no server is running" in status.stdout
        with pytest.raises(subprocess.TimeoutExpired):  # alive: stop signalled nothing
            bystander.wait(timeout=0.5)
    finally:
        bystander.kill()
        bystander.wait()
