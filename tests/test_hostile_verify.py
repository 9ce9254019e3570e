"""`--verify` against code that escapes its process group or eats memory.

Each CLI test runs the real CLI in a subprocess on the tree of test_verify_isolation.py: `BadWrapper`
in a module whose body misbehaves, `GoodWrapper` in a clean one, whose verdict must not change. The
unchanged code let a grandchild that called `setsid()` outlive the run, let any allocation through,
and had no `--verify-memory-limit`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time

import pytest
from conftest import REPO, write_tree
from test_verify_isolation import TREE, WRAPPER

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="isolation needs os.fork")
linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="the subreaper and the memory watchdog need Linux (prctl, /proc)")


def _env(tmp_path) -> dict:
    env = dict(os.environ, PYTHONPATH=str(REPO), ATTN_LINT_TEST_DIR=str(tmp_path),
               XDG_CACHE_HOME=str(tmp_path / "xdg-cache"), XDG_CONFIG_HOME=str(tmp_path / "xdg-config"))
    env.pop("CI", None)
    return env


def verify_cli(tmp_path, hostile: str, *extra: str, timeout: float = 60) -> dict:
    """`attn-lint --verify --format json` on TREE with `hostile` at the top of pkg/bad.py: BadWrapper's
    verification (GoodWrapper's is checked to be what it is without the bad module)."""
    root = write_tree(tmp_path / "src", dict(TREE, **{"pkg/bad.py": hostile + WRAPPER.format(name="BadWrapper")}))
    proc = subprocess.run([sys.executable, "-m", "attn_lint", "check", "--verify", "--no-cache", "--no-server",
                           "--verify-time-limit", "4", *extra, "--format", "json", str(root / "pkg")],
                          capture_output=True, text=True, timeout=timeout, env=_env(tmp_path), cwd=str(tmp_path))
    assert proc.returncode == 1, (proc.returncode, proc.stdout[-2000:], proc.stderr[-2000:])
    by = {f["class"].rsplit(".", 1)[-1]: f["verification"] for f in json.loads(proc.stdout)["findings"]}
    assert by["GoodWrapper"]["verdict"] == "attribute-hidden", by
    return by["BadWrapper"]


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False


@linux_only
def test_grandchildren_that_leave_the_session_do_not_outlive_the_run(tmp_path):
    """A grandchild calls setsid() (out of the group killed after the batch) and forks one more that
    does the same: both must be gone when the CLI returns (the old run left them sleeping)."""
    hostile = textwrap.dedent('''\
        import os, time
        def _note(name):
            d = os.environ["ATTN_LINT_TEST_DIR"]
            with open(os.path.join(d, name + ".tmp"), "w") as fh:
                fh.write(str(os.getpid()))
            os.rename(os.path.join(d, name + ".tmp"), os.path.join(d, name))
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                os.setsid()
                _note("gg.pid")
                time.sleep(60)
                os._exit(0)
            _note("g.pid")
            time.sleep(60)
            os._exit(0)
        for _ in range(200):
            if all(os.path.exists(os.path.join(os.environ["ATTN_LINT_TEST_DIR"], n)) for n in ("g.pid", "gg.pid")):
                break
            time.sleep(0.025)
        ''')
    pids = []
    try:
        bad = verify_cli(tmp_path, hostile)
        pids = [int((tmp_path / n).read_text()) for n in ("g.pid", "gg.pid")]
        assert bad["verdict"] == "attribute-hidden", bad  # the body completes; only its processes go
        deadline = time.monotonic() + 2
        while any(map(_alive, pids)) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not [p for p in pids if _alive(p)], "a grandchild that called setsid() outlived the run"
    finally:
        for p in pids:
            try:
                os.kill(p, 9)
            except ProcessLookupError:
                pass


@linux_only
def test_an_allocation_past_the_memory_limit_is_that_findings_verdict(tmp_path):
    bad = verify_cli(tmp_path, "_big = bytearray(6 * 2**30)\n", "--verify-memory-limit", "1G")
    assert bad["verdict"] == "unverifiable", bad
    assert "ran out of memory: an allocation failed at the 1 GiB limit (--verify-memory-limit)" in bad["detail"], bad
    assert bad["facts"]["isolation"] == "memory"


@linux_only
def test_the_default_memory_limit_stops_a_huge_allocation(tmp_path):
    # 64 GiB: past the 16 GiB default, refused at once (never touched) under the address-space cap.
    bad = verify_cli(tmp_path, "_big = bytearray(64 * 2**30)\n")
    assert bad["verdict"] == "unverifiable", bad
    assert "at the 16 GiB limit (--verify-memory-limit)" in bad["detail"], bad
    assert bad["facts"]["isolation"] == "memory"


@linux_only
def test_forks_that_together_pass_the_limit_are_killed(tmp_path):
    """Each fork stays under the address-space cap; their resident memory together does not."""
    hostile = textwrap.dedent('''\
        import os, time
        for _ in range(3):
            if os.fork() == 0:
                _mine = bytearray(200 * 2**20)  # zero-filled: resident
                time.sleep(30)
                os._exit(0)
        time.sleep(30)
        ''')
    start = time.monotonic()
    bad = verify_cli(tmp_path, hostile, "--verify-memory-limit", "400M")
    assert bad["verdict"] == "unverifiable", bad
    assert "used more than 400 MiB of memory (the limit, --verify-memory-limit); its processes were killed" \
        in bad["detail"], bad
    assert bad["facts"]["isolation"] == "memory"
    assert time.monotonic() - start < 30


WATCHDOG = '''
import ctypes, json, os, subprocess, sys, time
from attn_lint.runtime_check.isolate import Failure, run_tasks

keeper = subprocess.Popen(["sleep", "30"], start_new_session=True)  # attn-lint's own: must survive

def child_main(first, ch):
    ch.start(0)
    chunks = []
    for _ in range(60):  # 600 MiB, touched, 10 MiB at a time
        chunks.append(bytearray(10 * 2**20))
        time.sleep(0.01)
    time.sleep(30)
    ch.result(0, "survived")

got = run_tasks(1, child_main, lambda d: d, time_limit=20, memory_limit=300 * 2**20, cap_address_space=False)[0]
reaper = ctypes.c_int(-1)
ctypes.CDLL(None).prctl(37, ctypes.byref(reaper), 0, 0, 0)  # PR_GET_CHILD_SUBREAPER
print(json.dumps({"kind": getattr(got, "kind", None), "detail": getattr(got, "detail", repr(got)),
                  "keeper_alive": keeper.poll() is None, "subreaper_after": reaper.value}))
keeper.kill()
'''


@linux_only
def test_the_memory_watchdog_kills_a_child_whose_address_space_is_not_capped(tmp_path):
    """The GPU steps' case (no RLIMIT_AS): the parent's watchdog alone kills the child, and leaves
    attn-lint's own other children, and its subreaper setting, as they were."""
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-c", WATCHDOG], capture_output=True, text=True, timeout=60,
                          env=_env(tmp_path), cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stderr[-2000:]
    got = json.loads(proc.stdout)
    assert got["kind"] == "memory", got
    assert got["detail"] == "used more than 300 MiB of memory (the limit, --verify-memory-limit); its processes were killed"
    assert got["keeper_alive"] and got["subreaper_after"] == 0, got
    assert time.monotonic() - start < 20


def test_a_bad_memory_limit_is_a_usage_error(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "attn_lint", "check", "--verify", "--verify-memory-limit", "nonsense",
                           str(tmp_path)], capture_output=True, text=True, timeout=60, env=_env(tmp_path),
                          cwd=str(tmp_path))
    assert proc.returncode == 2, proc
    errors = [line for line in proc.stderr.splitlines() if line.startswith("Error:")]
    assert errors == ["Error: Invalid value for '--verify-memory-limit': 'nonsense' is not a size: "
                      "give e.g. 4G, 512M, 8GiB, a number of bytes, or none"], proc.stderr
    assert "Traceback" not in proc.stderr and not proc.stdout


def test_memory_limit_sizes_and_the_default():
    from attn_lint.linter.app.cli import RunOptions, check
    from attn_lint.runtime_check.isolate import DEFAULT_MEMORY_LIMIT, parse_size, size_text

    assert [parse_size(t) for t in ("4G", "512M", "8GiB", "1.5g", "1000000", "none", "0")] == \
        [4 * 2**30, 512 * 2**20, 8 * 2**30, 3 * 2**29, 1000000, None, None]
    for bad in ("nonsense", "-1G", "1.5", "G", "4X", ""):
        with pytest.raises(ValueError):
            parse_size(bad)
    # The CLI spells the default out (for --help): it must stay isolate.py's.
    option = next(p for p in check.params if p.name == "verify_memory_limit")
    assert parse_size(option.default) == RunOptions().verify_memory_limit == DEFAULT_MEMORY_LIMIT
    assert size_text(DEFAULT_MEMORY_LIMIT) == "16 GiB"


BUILD_STEP = '''
import json, time
from attn_lint.runtime_check.isolate import run_tasks

def child_main(first, ch):
    for i in range(first, 2):
        ch.start(i)
        if i == 0:
            ch.extend(i)  # a GPU step: it may compile FlashInfer's kernels
        chunks = [bytearray(10 * 2**20) for _ in range(40)]  # 400 MiB, touched
        time.sleep(0.6)  # long enough for the watchdog to look
        ch.result(i, len(chunks))
    ch.end()

got = run_tasks(2, child_main, lambda d: d, time_limit=20, memory_limit=300 * 2**20, cap_address_space=False)
print(json.dumps([getattr(g, "kind", g) for g in got]))
'''


@linux_only
def test_a_gpu_step_may_build_past_the_limit_and_the_next_finding_may_not(tmp_path):
    proc = subprocess.run([sys.executable, "-c", BUILD_STEP], capture_output=True, text=True, timeout=60,
                          env=_env(tmp_path), cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(proc.stdout) == [40, "memory"]


# --- one finding cannot speak for another; the checked code gets none of the caller's secrets ---------

FORGER = textwrap.dedent('''\
    import json, os, stat
    _forged = {"v": {"verdict": "not-reproduced", "confirmed": False, "load_mode": "import",
                     "detail": "forged", "seconds": 0.0}, "wants_gpu": False}
    _lines = [{"k": "result", "i": 0, "data": _forged}]
    for _i in range(1, 4):
        _lines += [{"k": "start", "i": _i}, {"k": "result", "i": _i, "data": _forged}]
    for _fd in range(3, 256):  # the result pipe, wherever it is
        try:
            if stat.S_ISFIFO(os.fstat(_fd).st_mode):
                os.write(_fd, ("\\n".join(json.dumps(m) for m in _lines) + "\\n").encode())
        except OSError:
            pass
    ''')


def test_a_finding_cannot_write_the_verdicts_of_the_findings_after_it(tmp_path):
    """Attack 6: BadWrapper's module body finds the result pipe and writes a `not-reproduced`
    verdict for every finding of its batch; GoodWrapper's (checked after it) must stay its own
    (verify_cli asserts it). Before one process per finding, the parent took them all."""
    bad = verify_cli(tmp_path, FORGER)
    assert bad["verdict"] == "not-reproduced" and bad["detail"] == "forged"  # its own: its code decides it


def test_messages_past_the_last_finding_never_abort_the_run(tmp_path):
    """The parent's bookkeeping took `memory` for a task past the last one and died of an
    IndexError; now a process says one thing about one finding and nothing else is heard."""
    hostile = FORGER.replace('_lines = [{"k": "result", "i": 0, "data": _forged}]',
                             '_lines = [{"k": "memory", "i": _n} for _n in range(0, 6)]')
    bad = verify_cli(tmp_path, hostile)
    assert bad["verdict"] == "unverifiable" and bad["facts"]["isolation"] == "memory"


SNOOPER = textwrap.dedent('''\
    import os
    def _read(path):
        try:
            with open(path, "rb") as fh:
                return fh.read()
        except OSError as exc:
            return ("unreadable: %s" % exc).encode()
    _seen = [repr(dict(os.environ)).encode(), _read("/proc/self/environ")]
    _pid = os.getpid()
    for _ in range(4):  # the processes above: the clean process, attn-lint itself, ...
        _stat = _read("/proc/%d/stat" % _pid)
        try:
            _pid = int(_stat.rsplit(b")", 1)[1].split()[1])
        except (IndexError, ValueError):
            break
        _seen += [_read("/proc/%d/environ" % _pid), _read("/proc/%d/cmdline" % _pid)]
    _seen.append(b"KEY:" + _read(os.environ.get("SNOOP_KEY_FILE", "{key_file}")))
    try:
        with open(os.path.join("{cache}", "planted.entry"), "wb") as fh:
            fh.write(b"x")
        _seen.append(b"WROTE-CACHE")
    except OSError as exc:
        _seen.append(b"cache refused")
    with open("{out}", "wb") as fh:
        fh.write(b"\\n".join(_seen))
    ''')


@linux_only
def test_the_checked_code_gets_no_secret_of_the_callers(tmp_path):
    """Attack 7: the checked code read the CI job's token and ATTN_LINT_CACHE_KEY from the
    environment it inherited (with the key it could seal entries every later run trusts)."""
    config, cache = tmp_path / "xdg-config", tmp_path / "cache"
    key_file = config / "attn-lint" / "cache-key"
    out = tmp_path / "seen.txt"
    hostile = SNOOPER.format(key_file=key_file, cache=cache / "attn-lint", out=out)
    root = write_tree(tmp_path / "src", dict(TREE, **{"pkg/bad.py": hostile + WRAPPER.format(name="BadWrapper")}))
    env = _env(tmp_path)
    env.update(GITHUB_TOKEN="ghp_secret_token_of_the_ci_job", ATTN_LINT_CACHE_KEY="the-cache-key-of-ci",
               XDG_CACHE_HOME=str(cache), XDG_CONFIG_HOME=str(config))
    # A plain run first: the cache and the user's key file exist, as on a developer's machine.
    env_plain = {k: v for k, v in env.items() if k != "ATTN_LINT_CACHE_KEY"}
    subprocess.run([sys.executable, "-m", "attn_lint", "--no-server", str(root / "pkg")], env=env_plain,
                   capture_output=True, timeout=120, cwd=str(tmp_path))
    assert key_file.exists() and (cache / "attn-lint").is_dir()
    key = key_file.read_bytes()
    proc = subprocess.run([sys.executable, "-m", "attn_lint", "check", "--verify", "--no-server", "--format", "json",
                           str(root / "pkg")], capture_output=True, text=True, timeout=120, env=env,
                          cwd=str(tmp_path))
    assert proc.returncode == 1, proc.stderr[-2000:]
    seen = out.read_bytes()
    assert b"ghp_secret_token_of_the_ci_job" not in seen
    assert b"the-cache-key-of-ci" not in seen
    assert b"ATTN_LINT_TEST_DIR" in seen  # attn-lint's own settings pass
    if "--verify: " not in proc.stderr:  # a mount namespace could be had: the key file and the cache too
        assert key not in seen and b"KEY:" + key not in seen
        assert b"cache refused" in seen and not (cache / "attn-lint" / "planted.entry").exists()
