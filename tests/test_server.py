"""The resident server (`--server`): same findings as an in-process run, through edits, new files and
deletions; its lifecycle (start, status, stop, idle exit, another build asking); and falling back
to an in-process run whenever it cannot be used."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time

import pytest
from conftest import FIXTURES, lint

from attn_lint.linter.app import server
from attn_lint.linter.app.engine import Settings

# The project the CLI's runs below belong to: found from this directory (the checkout's git root);
# trees under tmp_path have no pyproject.toml or git root of their own, so theirs is this one too.
PROJECT = os.path.realpath(subprocess.run(["git", "rev-parse", "--show-toplevel"], capture_output=True, text=True,
                                          check=True).stdout.strip())

pytestmark = pytest.mark.skipif(not hasattr(socket, "AF_UNIX"), reason="the server needs Unix sockets")


def _env() -> dict:
    # The CLI never uses the server under CI (a one-shot job); these tests are about the server.
    return {k: v for k, v in os.environ.items() if k != "CI"}


def cli(*args, cwd=None):
    proc = subprocess.run([sys.executable, "-m", "attn_lint", *map(str, args)], capture_output=True, text=True,
                          env=_env(), cwd=cwd, timeout=120)
    return proc


def served(tree, cache):
    proc = cli("--server", "--format", "json", "--cache-dir", cache, tree)
    assert proc.returncode in (0, 1), proc.stderr
    assert "running without the server" not in proc.stderr, proc.stderr
    return json.loads(proc.stdout)


def in_process(tree, cwd=None):
    """The engine's default report (confidence medium or above), with paths shown as the CLI shows
    them (from its current directory)."""
    result = lint(tree, display_base=str(cwd or os.getcwd()))
    return sorted((f.code, f.path, f.line, f.member, f.message) for f in result.findings if f.confidence != "low")


def summary(doc):
    return sorted((f["code"], f["path"], f["line"], f["member"], f["message"]) for f in doc["findings"])


@pytest.fixture
def cache(tmp_path):
    directory = tmp_path / "cache"
    yield directory
    server.stop_all(str(directory))


def test_server_matches_in_process_runs_through_edits(tmp_path, cache):
    tree = tmp_path / "tree"
    shutil.copytree(FIXTURES / "al001_hidden_hook", tree)
    backends = tree / "serving" / "backends"

    first = served(tree, cache)
    assert first["stats"].get("server") is True
    assert summary(first) == in_process(tree) and [f["code"] for f in first["findings"]] == ["AL001"]
    assert served(tree, cache)["stats"].get("reused_result") is True  # nothing changed

    # The first fix from the real case: the wrapper delegates with two arguments (AL002 appears).
    shutil.copy(FIXTURES / "al002_delegation_typeerror" / "serving" / "backends" / "hybrid_linear_attn_backend.py",
                backends / "hybrid_linear_attn_backend.py")
    second = served(tree, cache)
    assert summary(second) == in_process(tree)
    assert [f["code"] for f in second["findings"]] == ["AL002"]

    # A new file: the server's remembered discovery must see it (a backend, and a builder that
    # puts it behind the wrapper: a class the tree never builds is no delegate).
    (backends / "extra_backend.py").write_text(
        "from serving.backends.base_attn_backend import AttentionBackend\n"
        "from serving.backends.hybrid_linear_attn_backend import HybridLinearAttnBackend\n"
        "from serving.backends.mamba_backend import MambaAttnBackend\n\n\n"
        "class ExtraBackend(AttentionBackend):\n"
        "    def init_mha_chunk_metadata(self):\n"
        "        pass\n\n\n"
        "def build_extra(runner):\n"
        "    return HybridLinearAttnBackend(ExtraBackend(), MambaAttnBackend(runner), [0])\n")
    third = served(tree, cache)
    assert summary(third) == in_process(tree)
    assert any("ExtraBackend" in f["message"] or "ExtraBackend" in json.dumps(f["evidence"])
               for f in third["findings"])

    # And a deleted one.
    (backends / "extra_backend.py").unlink()
    assert summary(served(tree, cache)) == summary(second)


def one_shot(tree, cache):
    proc = cli("--no-server", "--format", "json", "--cache-dir", cache, tree)
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout)


def test_identical_files_in_two_modules_after_an_edit(tmp_path, cache):
    # Equal files share one summary in the server's memory; before an edit every file was parsed
    # on its own, after it the unchanged ones come from memory, shared between the two copies.
    tree = tmp_path / "tree"
    shutil.copytree(FIXTURES, tree / "a")
    shutil.copytree(FIXTURES, tree / "b")
    assert summary(served(tree, cache)) == in_process(tree)
    with open(tree / "a" / "al001_hidden_hook" / "serving" / "__init__.py", "a") as fh:
        fh.write("# edited\n")
    expected = in_process(tree)
    assert summary(served(tree, cache)) == expected
    server.stop_all(str(cache))
    # What the server wrote to the on-disk cache gives a one-shot run the same findings.
    assert summary(one_shot(tree, cache)) == expected


def test_astroid_answers_follow_edits_to_the_modules_they_came_through(tmp_path, cache):
    from test_astroid_fallback import registry_tree, set_registry
    pkg = registry_tree(tmp_path, "FlashBackend")
    for hybrid in ("FlashBackend", "HybridBackend", "FlashBackend"):
        set_registry(pkg, hybrid)
        expected = in_process(pkg)
        assert len(expected) == (hybrid == "HybridBackend")
        assert summary(served(pkg, cache)) == expected
        assert summary(one_shot(pkg, cache)) == expected


def test_lifecycle_start_status_stop(tmp_path, cache):
    assert cli("server", "status", "--cache-dir", cache).returncode == 1
    assert cli("server", "start", "--cache-dir", cache).returncode == 0
    status = cli("server", "status", "--cache-dir", cache)
    assert status.returncode == 0 and "pid" in status.stdout
    assert cli("server", "start", "--cache-dir", cache).returncode == 0  # already running: fine
    assert "stopped" in cli("server", "stop", "--cache-dir", cache).stdout
    deadline = time.monotonic() + 10
    while cli("server", "status", "--cache-dir", cache).returncode != 1:
        assert time.monotonic() < deadline, "the server did not stop"
        time.sleep(0.1)
    assert not os.path.exists(server.socket_path(str(cache), PROJECT))


def test_idle_server_exits(tmp_path, cache):
    proc = subprocess.Popen([sys.executable, "-m", "attn_lint", "server", "run", "--cache-dir", str(cache),
                             "--idle", "1"], env=_env(), stderr=subprocess.PIPE, text=True)
    try:
        assert proc.wait(timeout=30) == 0
    finally:
        proc.kill()
    assert "idle limit reached" in proc.stderr.read()


def test_one_server_per_cache_folder(tmp_path, cache):
    assert cli("server", "start", "--cache-dir", cache).returncode == 0
    second = subprocess.run([sys.executable, "-m", "attn_lint", "server", "run", "--cache-dir", str(cache)],
                            env=_env(), capture_output=True, timeout=30)
    assert second.returncode == 3  # the first holds the lock; the second leaves at once


def test_a_client_of_another_build_makes_the_server_leave_only_when_it_asks_for_a_server(tmp_path, cache):
    assert cli("server", "start", "--cache-dir", cache).returncode == 0

    def ask(replace: bool):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.connect(server.socket_path(str(cache), PROJECT))
        with sock:
            server._send(sock, {"op": "analyse", "key": "another-build", "replace": replace, "cwd": str(tmp_path),
                                "paths": [], "settings": Settings(cache_dir=str(cache))})
            return server._reply(sock)

    # A plain run of another build (the user's environment while the pre-commit hook's server
    # runs) runs in-process and leaves that server be.
    assert "other_build" in ask(replace=False)
    assert server.control(str(cache), PROJECT, "ping") is not None
    assert "stale" in ask(replace=True)  # `--server` of another build: that server makes way
    deadline = time.monotonic() + 10
    while server.control(str(cache), PROJECT, "ping") is not None:
        assert time.monotonic() < deadline, "the stale server did not leave"
        time.sleep(0.1)


def test_no_server_without_a_cache_or_under_ci(tmp_path):
    tree = FIXTURES / "al001_hidden_hook"
    result, reason = server.analyse([str(tree)], Settings(cache_dir=None), PROJECT)
    assert result is None and "cache" in reason
    result, reason = server.analyse([str(tree)], Settings(cache_dir=str(tmp_path / "c")), PROJECT, spawn=False)
    assert result is None and reason == "no server is running"
    # Under CI the flag is accepted and the run happens in-process: nothing is left running.
    proc = subprocess.run([sys.executable, "-m", "attn_lint", "--server", "--format", "json", "--cache-dir",
                           str(tmp_path / "ci"), str(tree)], capture_output=True, text=True,
                          env={**_env(), "CI": "true"}, timeout=120)
    assert proc.returncode == 1 and json.loads(proc.stdout)["stats"].get("server") is None
    assert server.running(str(tmp_path / "ci")) == []


def test_long_cache_paths_use_a_short_socket(tmp_path):
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    path = server.socket_path(str(deep), PROJECT)
    assert len(path.encode()) < 104 and path.endswith(".sock")


def test_a_socket_folder_others_can_write_is_refused(tmp_path):
    cache = tmp_path / "cache"
    (cache / "server").mkdir(parents=True)
    os.chmod(cache / "server", 0o777)
    with pytest.raises(OSError):
        server.socket_path(str(cache), PROJECT)
    result, reason = server.analyse([str(FIXTURES / "al001_hidden_hook")], Settings(cache_dir=str(cache)), PROJECT)
    assert result is None and "written by others" in reason


def test_relative_cache_folder_and_paths(tmp_path):
    tree = tmp_path / "tree"
    shutil.copytree(FIXTURES / "al001_hidden_hook", tree)
    try:
        proc = subprocess.run([sys.executable, "-m", "attn_lint", "--server", "--format", "json", "--cache-dir",
                               "rel-cache", "tree"], capture_output=True, text=True, env=_env(), cwd=tmp_path,
                              timeout=120)
        assert "running without the server" not in proc.stderr, proc.stderr
        doc = json.loads(proc.stdout)
        assert doc["stats"].get("server") is True and doc["findings"][0]["path"].startswith("tree/serving/")
        assert (tmp_path / "rel-cache" / "server").is_dir()
    finally:
        server.stop_all(str(tmp_path / "rel-cache"))


def test_a_running_server_is_used_unless_refused(tmp_path, cache):
    tree = FIXTURES / "al001_hidden_hook"

    def run(*flags):
        proc = cli(*flags, "--format", "json", "--cache-dir", cache, tree)
        return proc, json.loads(proc.stdout)

    proc, doc = run()  # none running: in-process, and nothing said about it
    assert doc["stats"].get("server") is None and proc.stderr == ""
    assert not (cache / "server").exists()  # a plain run starts nothing, creates nothing
    assert cli("server", "start", "--cache-dir", cache).returncode == 0
    _, doc = run()
    assert doc["stats"].get("server") is True  # one is running: used
    _, doc = run("--no-server")
    assert doc["stats"].get("server") is None


def test_a_run_with_no_server_listening_does_not_load_the_client(tmp_path, cache):
    """Most runs find no server: they look for its socket and go on, without importing the
    server's module (a tenth of a warm run's imports); with one listening, the client is used."""
    tree = FIXTURES / "al001_hidden_hook"
    # The CLI leaves through os._exit (no interpreter teardown): say what was loaded just before.
    probe = ("import os, sys\nfrom attn_lint.entry import main\nsys.argv = ['attn-lint', *sys.argv[1:]]\n"
             "leave = os._exit\n"
             "def report(code):\n"
             "    loaded = 'attn_lint.linter.app.server' in sys.modules\n"
             "    sys.stderr.write('LOADED\\n' if loaded else 'NOT LOADED\\n')\n"
             "    sys.stderr.flush()\n"
             "    leave(code)\n"
             "os._exit = report\n"
             "main()\n")

    def loaded() -> str:
        proc = subprocess.run([sys.executable, "-c", probe, "--format", "json", "--cache-dir", str(cache), str(tree)],
                              capture_output=True, text=True, env=_env(), timeout=120)
        return proc.stderr.strip().splitlines()[-1]

    assert loaded() == "NOT LOADED"
    assert cli("server", "start", "--cache-dir", cache).returncode == 0
    assert loaded() == "LOADED"


# --- a server or client that dies, stops or loses its socket ------------------------------------
def _server_pid(cache) -> int:
    status = cli("server", "status", "--cache-dir", cache)
    assert status.returncode == 0, status.stdout + status.stderr
    return int(status.stdout.split("server pid ", 1)[1].split()[0])


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _children(pid: int) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    if int(fh.read().rsplit(")", 1)[1].split()[1]) == pid:
                        out.append(int(entry))
            except (OSError, ValueError, IndexError):
                pass
    return out


def _wait_until(condition, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def _kill(pids) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


linux_only = pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="reads processes from /proc")


@linux_only
def test_a_server_killed_mid_run_leaves_no_workers_and_later_clients_run(tmp_path, cache):
    tree = tmp_path / "big" / "pkg"
    tree.mkdir(parents=True)
    (tree / "__init__.py").write_text("")
    body = "".join(f"class C{i}:\n    def m(self, x):\n        return self.n.m(x) + {i}\n\n" for i in range(1500))
    for n in range(64):  # enough parsing that the pool's workers are caught running
        (tree / f"m{n}.py").write_text(f"# {n}\n" + body)
    assert cli("server", "start", "--cache-dir", cache).returncode == 0
    pid = _server_pid(cache)
    client = subprocess.Popen([sys.executable, "-m", "attn_lint", "--server", "-j", "2", "--format", "json",
                               "--cache-dir", str(cache), str(tree)], env=_env(), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    workers: list[int] = []
    try:
        def pool_running() -> bool:
            workers[:] = _children(pid)
            return len(workers) >= 2
        _wait_until(pool_running, 60, "the server never started its workers")
        os.kill(pid, signal.SIGKILL)
        _wait_until(lambda: not any(_alive(w) for w in workers), 10, "the workers outlived their server")
        out, err = client.communicate(timeout=90)  # it falls back to a run of its own
        assert client.returncode == 0 and "running without the server" in err, err
        # Nothing holds the lock or the socket: status says so, plain and --server runs work.
        assert cli("server", "status", "--cache-dir", cache).returncode == 1
        plain = cli("--format", "json", "--cache-dir", cache, tree)
        assert plain.returncode == 0 and plain.stderr == "", plain.stderr
        assert served(tree, cache)["stats"].get("server") is True
    finally:
        client.kill()
        _kill(workers)


@linux_only
def test_a_stopped_client_does_not_block_other_clients(tmp_path, cache):
    assert cli("server", "start", "--cache-dir", cache).returncode == 0
    # Connects and starts a request, then is suspended (Ctrl-Z) before finishing it.
    stalled = subprocess.Popen([sys.executable, "-c",
                                "import socket, sys, time\n"
                                "s = socket.socket(socket.AF_UNIX)\n"
                                "s.connect(sys.argv[1])\n"
                                "s.sendall(b'\\0\\0\\0')\n"
                                "print('connected', flush=True)\n"
                                "time.sleep(600)\n", server.socket_path(str(cache), PROJECT)],
                               stdout=subprocess.PIPE, text=True)
    try:
        assert stalled.stdout.readline().strip() == "connected"
        os.kill(stalled.pid, signal.SIGSTOP)
        tree = FIXTURES / "al001_hidden_hook"
        start = time.monotonic()
        doc = served(tree, cache)
        assert doc["stats"].get("server") is True and summary(doc) == in_process(tree)
        assert time.monotonic() - start < 30
    finally:
        stalled.kill()
        stalled.wait(timeout=10)


@linux_only
def test_a_stopped_server_is_found_by_its_lock_and_clients_fall_back(tmp_path, cache):
    assert cli("server", "start", "--cache-dir", cache).returncode == 0
    pid = _server_pid(cache)
    os.kill(pid, signal.SIGSTOP)
    try:
        status = cli("server", "status", "--cache-dir", cache)
        assert status.returncode == 0 and f"pid {pid}" in status.stdout, status.stdout
        tree = FIXTURES / "al001_hidden_hook"
        proc = subprocess.run([sys.executable, "-m", "attn_lint", "--format", "json", "--cache-dir", str(cache),
                               str(tree)], capture_output=True, text=True, env=_env(), timeout=90)
        assert proc.returncode == 1 and [f["code"] for f in json.loads(proc.stdout)["findings"]] == ["AL001"]
        assert len(proc.stderr.splitlines()) == 1 and "running without the server" in proc.stderr, proc.stderr
        # Said at once (a stopped process is seen in /proc), not after the client's 15 s of silence.
        assert sys.platform != "linux" or f"the server (pid {pid}) is stopped" in proc.stderr, proc.stderr
        assert "stopped" in cli("server", "stop", "--cache-dir", cache).stdout
        _wait_until(lambda: not _alive(pid), 15, "`server stop` did not end a stopped server")
        assert cli("server", "status", "--cache-dir", cache).returncode == 1
    finally:
        _kill([pid])


@linux_only
def test_a_removed_socket_makes_the_server_exit(tmp_path, cache):
    assert cli("server", "start", "--cache-dir", cache).returncode == 0
    pid = _server_pid(cache)
    try:
        os.unlink(server.socket_path(str(cache), PROJECT))
        _wait_until(lambda: not _alive(pid), 10, "the server outlived its socket")
        assert cli("server", "status", "--cache-dir", cache).returncode == 1
    finally:
        _kill([pid])


# --- one server per project, whichever environment started it --------------
def test_a_server_started_from_another_environment_is_found_and_stopped(tmp_path, cache):
    """The `attn-lint-server` pre-commit hook runs attn-lint from pre-commit's own virtualenv:
    `server status` and `server stop` from the user's environment must find that server."""
    import venv
    env_dir = tmp_path / "hook-env"
    venv.EnvBuilder(system_site_packages=True, with_pip=False, symlinks=True).create(env_dir)
    other_python = env_dir / "bin" / "python"
    tree = FIXTURES / "al001_hidden_hook"
    proc = subprocess.run([str(other_python), "-m", "attn_lint", "--server", "--format", "json", "--cache-dir",
                           str(cache), str(tree)], capture_output=True, text=True, env=_env(), timeout=120)
    assert json.loads(proc.stdout)["stats"].get("server") is True, proc.stderr
    status = cli("server", "status", "--cache-dir", cache)
    assert status.returncode == 0, status.stdout + status.stderr
    assert f"for {PROJECT}," in status.stdout and str(other_python) in status.stdout, status.stdout
    # A plain run from this environment does not use that build's server, and leaves it running.
    plain = cli("--format", "json", "--cache-dir", cache, tree)
    assert json.loads(plain.stdout)["stats"].get("server") is None and plain.stderr == "", plain.stderr
    assert cli("server", "status", "--cache-dir", cache).returncode == 0
    assert "stopped" in cli("server", "stop", "--cache-dir", cache).stdout
    _wait_until(lambda: cli("server", "status", "--cache-dir", cache).returncode == 1, 15,
                "`server stop` did not stop the other environment's server")


def test_one_server_per_project_and_status_names_it(tmp_path, cache):
    projects = {}
    for name in ("alpha", "beta"):
        root = tmp_path / name
        shutil.copytree(FIXTURES / "al001_hidden_hook", root)
        (root / "pyproject.toml").write_text('[tool.attn-lint]\nsrc = ["serving"]\n')
        projects[name] = os.path.realpath(root)
        proc = cli("--server", "--format", "json", "--cache-dir", cache, cwd=root)
        doc = json.loads(proc.stdout)
        assert doc["stats"].get("server") is True and doc["findings"][0]["path"].startswith("serving/"), proc.stderr
    assert sorted(p for _, p in server.running(str(cache))) == sorted(projects.values())
    status = cli("server", "status", "--cache-dir", cache, cwd=tmp_path / "alpha" / "serving")
    assert status.returncode == 0 and f"for {projects['alpha']}," in status.stdout, status.stdout
    assert "also running on this cache: server pid" in status.stdout and projects["beta"] in status.stdout
    assert "stopped" in cli("server", "stop", "--cache-dir", cache, cwd=tmp_path / "alpha").stdout
    _wait_until(lambda: [p for _, p in server.running(str(cache))] == [projects["beta"]], 15,
                "stopping alpha's server stopped another, or not alpha's")
    status = cli("server", "status", "--cache-dir", cache, cwd=tmp_path / "alpha")
    assert status.returncode == 1 and f"no server is running for {projects['alpha']}" in status.stdout
    assert projects["beta"] in status.stdout  # the one that runs is named
    assert projects["beta"] in cli("server", "stop", "--all", "--cache-dir", cache, cwd=tmp_path).stdout
    _wait_until(lambda: server.running(str(cache)) == [], 15, "`server stop --all` left a server")


def test_per_module_memos_follow_an_edit(tmp_path, cache):
    """What a tree pass keeps per module (model reach's tables, in ModuleFacts.derived) is redone
    for an edited module: a wrapper built without a model test under the server brings its finding
    back into the default report, as an in-process run says."""
    import test_signal_model_reach as mr

    tree = mr._tree(tmp_path / "tree")
    first = served(tree, cache)
    assert summary(first) == in_process(tree)
    assert "hook_b" not in {f["member"] for f in first["findings"]}  # latent: model reach rules it out

    # A second, unguarded construction through a class-valued local: only the edited module's
    # tables (locals called after being bound to a class) tell.
    (tree / "pkg" / "setup.py").write_text(mr.SETUP + (
        "\n\ndef wrap_any(runner, backend):\n    cls = Wrapper\n    return cls(backend)\n"))
    second = served(tree, cache)
    assert summary(second) == in_process(tree)
    assert "hook_b" in {f["member"] for f in second["findings"]}


@linux_only
def test_a_listener_that_takes_a_connection_while_dying_is_not_a_live_server(tmp_path):
    """A killed server's listening socket can take one more connection in the instant before the
    kernel closes it: the connection then ends without a word. That socket is left over (and
    removed), not a live server's; one that answers a ping is kept."""
    import socket
    import threading

    from attn_lint.linter.app import server as srv
    from attn_lint.linter.app.server_paths import socket_path

    cache, project = str(tmp_path / "cache"), str(tmp_path / "proj")
    os.makedirs(project)
    path = socket_path(cache, project, create=True)
    os.close(srv._private_file(srv._lock_path(cache, project), os.O_RDWR | os.O_CREAT))

    def serve(answer: bool):
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(path)
        listener.listen(4)

        def run():
            conn, _ = listener.accept()
            with conn:
                if answer:
                    srv._recv(conn)
                    srv._send(conn, {"ok": {"pid": os.getpid()}})
            listener.close()

        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        return thread

    thread = serve(answer=True)
    assert srv._gone(cache, project, 0.0) is None and os.path.exists(path)
    thread.join(5)
    os.unlink(path)
    thread = serve(answer=False)
    assert srv._gone(cache, project, 0.0) == "the server was killed or crashed (the socket it left is removed now)"
    assert not os.path.exists(path)
    thread.join(5)
