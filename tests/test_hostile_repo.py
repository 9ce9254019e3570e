"""A repository attn-lint lints may be hostile: what it plants must not make attn-lint write or read
outside it, exhaust the machine, serve a stale result or die with a traceback.

Each test builds the hostile repository in a temporary folder and runs the installed command line
on it in a subprocess, as CI would on a stranger's pull request. Every one of them failed before
the defences they pin (a write through the planted link, 200 workers, a read that never ended, the
file system walked, a forged cache entry served, a stale result served, a traceback).
"""

from __future__ import annotations

import hashlib
import json
import marshal
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import write_tree
from small_trees import TREES

TREE = {"pyproject.toml": "[tool.attn-lint]\n", **TREES["AL001"]}


def _command() -> list[str]:
    script = Path(sys.executable).parent / "attn-lint"
    return [str(script)] if script.exists() else [sys.executable, "-m", "attn_lint"]


@pytest.fixture
def home(tmp_path) -> Path:
    """The user's own folders, outside the repository."""
    home = tmp_path / "home"
    (home / ".cache").mkdir(parents=True)
    return home


@pytest.fixture
def repo(tmp_path) -> Path:
    return write_tree(tmp_path / "repo", dict(TREE))


def lint(repo: Path, home: Path, *args: str, timeout: float = 60, **kw) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "ATTN_LINT_CACHE_KEY")}
    env.update(HOME=str(home), XDG_CACHE_HOME=str(home / ".cache"), XDG_CONFIG_HOME=str(home / ".config"),
               NO_COLOR="1")
    kw.setdefault("stdin", subprocess.DEVNULL)
    return subprocess.run([*_command(), "--no-server", *args], cwd=repo, env=env, capture_output=True, text=True,
                          timeout=timeout, **kw)


def one_clean_line(proc: subprocess.CompletedProcess) -> str:
    """The run failed with exit 2 and one line on stderr, never a traceback."""
    err = proc.stderr.strip()
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in err and "internal error" not in err, err
    assert len(err.splitlines()) == 1, err
    return err


# 1. Writes never go through a link the repository planted -----------------------------------------

def test_write_baseline_refuses_a_planted_link_out_of_the_repository(repo, home):
    bashrc = home / ".bashrc"
    bashrc.write_text("export PATH=$HOME/bin:$PATH\n")
    (repo / ".attn-lint-baseline.json").symlink_to(bashrc)
    err = one_clean_line(lint(repo, home, "--write-baseline", ".attn-lint-baseline.json"))
    assert "link out of the project root" in err
    assert bashrc.read_text() == "export PATH=$HOME/bin:$PATH\n"
    assert (repo / ".attn-lint-baseline.json").is_symlink()


def test_write_baseline_refuses_a_planted_folder_link_out_of_the_repository(repo, home):
    outside = home / "outside"
    outside.mkdir()
    (repo / ".ci").symlink_to(outside)
    err = one_clean_line(lint(repo, home, "--write-baseline", ".ci/baseline.json"))
    assert "folder is a link out of the project root" in err
    assert list(outside.iterdir()) == []


def test_write_baseline_through_a_link_inside_the_repository_replaces_its_target(repo, home):
    (repo / "ci").mkdir()
    (repo / "ci" / "baseline.json").write_text("{}")
    (repo / ".attn-lint-baseline.json").symlink_to(repo / "ci" / "baseline.json")
    proc = lint(repo, home, "--write-baseline", ".attn-lint-baseline.json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads((repo / "ci" / "baseline.json").read_text())["findings"]
    assert (repo / ".attn-lint-baseline.json").is_symlink()


@pytest.mark.parametrize("planted", ["fifo", "missing-folder"])
def test_write_baseline_refuses_what_is_not_a_regular_file(repo, home, planted):
    if planted == "fifo":
        os.mkfifo(repo / "baseline.json")
        name = "baseline.json"
    else:
        name = "no/such/folder/baseline.json"
    err = one_clean_line(lint(repo, home, "--write-baseline", name))
    assert ("it is a FIFO" if planted == "fifo" else "no such folder") in err
    if planted == "fifo":
        assert stat.S_ISFIFO(os.lstat(repo / "baseline.json").st_mode)


def test_fix_never_rewrites_a_file_outside_the_repository(repo, home):
    outside = home / "elsewhere.py"
    shutil.move(repo / "serving" / "backends.py", outside)
    (repo / "serving" / "backends.py").symlink_to(outside)
    before = outside.read_bytes()
    proc = lint(repo, home, "--no-cache", "--fix")
    assert outside.read_bytes() == before
    assert "leads outside" in proc.stdout and "Traceback" not in proc.stderr


# 2. Settings a repository can set are bounded ------------------------------------------------------

def test_jobs_from_the_repository_is_capped_at_the_cores(repo, home):
    (repo / "pyproject.toml").write_text("[tool.attn-lint]\njobs = 100000\n")
    shown = lint(repo, home, "--show-settings")
    assert f"jobs               = {os.cpu_count()}" in shown.stdout, shown.stdout
    notes = [line for line in shown.stderr.splitlines() if "capped" in line]
    assert len(notes) == 1 and "jobs = 100000" in notes[0], shown.stderr
    # The user's own command line may ask for more.
    assert "jobs               = 3" in lint(repo, home, "--show-settings", "--jobs", "3").stdout


@pytest.mark.parametrize("src", ["/proc", "../outside", "planted-link"])
def test_src_outside_the_repository_is_refused(repo, home, src):
    outside = repo.parent / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text("SECRET = (\n")  # a syntax error would print its line
    (repo / "planted-link").symlink_to(outside)
    (repo / "pyproject.toml").write_text(f'[tool.attn-lint]\nsrc = ["{src}"]\n')
    err = one_clean_line(lint(repo, home, timeout=30))
    assert "`src`" in err and "outside the project root" in err and "SECRET" not in err


def test_exclude_reaching_outside_the_repository_is_refused(repo, home):
    (repo / "pyproject.toml").write_text('[tool.attn-lint]\nexclude = ["../other/*"]\n')
    assert "`exclude`" in one_clean_line(lint(repo, home))


def test_a_planted_folder_link_out_of_the_repository_is_not_walked(repo, home):
    outside = repo.parent / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text("SECRET = (\n")
    (repo / "serving" / "vendored").symlink_to(outside)
    proc = lint(repo, home, "--no-cache", timeout=30)
    assert "SECRET" not in proc.stdout + proc.stderr and "secret.py" not in proc.stdout + proc.stderr
    assert "leads outside" in proc.stdout + proc.stderr


# 3. Every file read is a regular file under a cap --------------------------------------------------

@pytest.mark.parametrize("planted", ["/dev/zero", "fifo", "/dev/stdin", "huge"])
def test_baseline_must_be_a_regular_file_of_bounded_size(repo, home, planted):
    name = repo / "baseline.json"
    if planted == "fifo":
        os.mkfifo(name)
    elif planted == "huge":
        with open(name, "wb") as fh:
            fh.truncate(65 * 2**20)  # sparse: costs no disk
    else:
        name.symlink_to(planted)
    # stdin stays open and silent: a read of /dev/stdin would wait for ever.
    proc = subprocess.Popen(["sleep", "60"], stdout=subprocess.PIPE)
    try:
        err = one_clean_line(lint(repo, home, "--baseline", "baseline.json", timeout=30, stdin=proc.stdout))
    finally:
        proc.kill()
        proc.wait()
    assert "baseline.json" in err and ("larger than" in err or "it is a" in err), err


@pytest.mark.parametrize("document, words", [
    ({"version": 1, "findings": [{"fingerprint": "ab", "count": "x"}]}, "`count`"),
    ('{"version": 1, "findings": [{"fingerprint": "ab", "count": 1e999}]}', "`count`"),
    ('{"version": 1, "findings": [{"fingerprint": "ab", "count": true}]}', "`count`"),
    ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
], ids=["count-text", "count-1e999", "count-true", "nested-100000"])
def test_a_bad_baseline_is_one_line_naming_the_file(repo, home, document, words):
    text = document if isinstance(document, str) else json.dumps(document)
    (repo / "my-baseline.json").write_text(text)
    err = one_clean_line(lint(repo, home, "--baseline", "my-baseline.json"))
    assert "my-baseline.json" in err and words in err


def test_a_nul_in_the_cache_dir_setting_is_a_configuration_error(repo, home):
    (repo / "pyproject.toml").write_text('[tool.attn-lint]\ncache-dir = "a\\u0000b"\n')
    err = one_clean_line(lint(repo, home))
    assert "configuration error" in err and "cache-dir" in err


def test_a_pyproject_link_to_a_device_is_not_read(repo, home):
    (repo / "serving" / "__init__.py").write_text("")
    (repo / "serving" / "pyproject.toml").symlink_to("/dev/zero")
    proc = lint(repo, home, "--no-cache", "serving", timeout=30)
    assert proc.returncode == 1, proc.stderr  # the finding, with the repository's own configuration


def test_a_pyproject_above_the_git_root_does_not_take_over_the_run(tmp_path, home):
    """A file above the repository (a shared folder, a CI workspace) is not the project's: its
    `exclude` would hide findings and its `src` would read outside the repository."""
    outer = tmp_path / "outer"
    write_tree(outer, {"pyproject.toml": '[tool.attn-lint]\nexclude = ["**"]\nsrc = ["."]\n',
                       "elsewhere/secret.py": "class Secret:\n    pass\n"})
    inner = write_tree(outer / "repo", dict(TREES["AL001"]))
    subprocess.run(["git", "init", "-q"], cwd=inner, check=True)
    proc = lint(inner, home, "--no-cache", "--format", "json")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    doc = json.loads(proc.stdout)
    assert [f["class"].rsplit(".", 1)[-1] for f in doc["findings"]] == ["HybridBackend"]
    assert doc["stats"]["files"] == 2  # the repository's own two files, nothing of `outer`
    named = lint(inner, home, "--no-cache", "--config", str(outer / "pyproject.toml"), ".")
    assert named.returncode == 0, named.stdout  # named with --config, the file applies


@pytest.mark.parametrize("document", ["tool = 5\n", "[tool]\nattn-lint = 3\n", 'tool = "x"\n'])
def test_a_config_of_the_wrong_shape_is_one_line_never_a_traceback(repo, home, document):
    (repo / "other.toml").write_text(document)
    err = one_clean_line(lint(repo, home, "--config", "other.toml"))
    assert "other.toml" in err


# 5. The cache cannot be forged by whoever can write into it ----------------------------------------

def _public_summary_key(repo: Path, home: Path) -> bytes:
    """What anyone can compute from the installed attn-lint: its version, Python's, its code."""
    env = {**os.environ, "HOME": str(home)}
    out = subprocess.run([sys.executable, "-c", "from attn_lint.linter.perfile import cache; print(cache.SUMMARY_KEY)"],
                         cwd=repo, env=env, capture_output=True, text=True, check=True)
    return out.stdout.strip().encode()


def test_a_cache_entry_sealed_with_public_values_is_a_miss(repo, home):
    cache_dir = repo / ".lint-cache"  # a cache folder inside the repository, named by the user
    first = lint(repo, home, "--cache-dir", str(cache_dir), "--format", "json")
    assert first.returncode == 1, first.stderr
    key = _public_summary_key(repo, home)[:64]
    forged = 0
    for entry in cache_dir.glob("result-*.entry"):
        raw = entry.read_bytes()
        magic, payload = raw[:4], marshal.loads(raw[20:])
        findings, errors, stats, reads = payload
        body = marshal.dumps(((), errors, stats, reads), 4)
        digest = hashlib.blake2b(entry.name.encode(), key=key, digest_size=16)
        digest.update(body)
        entry.write_bytes(magic + digest.digest() + body)
        forged += 1
    assert forged
    again = lint(repo, home, "--cache-dir", str(cache_dir), "--format", "json")
    assert again.returncode == 1, again.stdout
    assert len(json.loads(again.stdout)["findings"]) == len(json.loads(first.stdout)["findings"])


def test_the_cache_key_is_the_users_own_secret(repo, home):
    assert lint(repo, home).returncode == 1
    key = home / ".config" / "attn-lint" / "cache-key"
    st = key.lstat()
    assert stat.S_ISREG(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o600 and st.st_size == 32
    assert stat.S_IMODE((home / ".config" / "attn-lint").stat().st_mode) == 0o700


# 7. A stale result is never served ---------------------------------------------------------------

def test_an_edit_that_keeps_size_and_mtime_is_seen(repo, home):
    model = repo / "serving" / "model.py"
    assert lint(repo, home).returncode == 1
    st = model.stat()
    text = model.read_text()
    model.write_text(text.replace('"plan_chunks"', '"plan_chunkz"'))  # same size: no probe of the hook
    os.utime(model, ns=(st.st_atime_ns, st.st_mtime_ns))  # touch -r
    assert model.stat().st_size == st.st_size and model.stat().st_mtime_ns == st.st_mtime_ns
    cached, fresh = lint(repo, home), lint(repo, home, "--no-cache")
    assert fresh.returncode == 0, fresh.stdout
    assert cached.returncode == 0, cached.stdout


def test_a_planted_link_in_a_cache_folder_inside_the_repository_takes_no_entry_out(repo, home):
    cache_dir = repo / ".lint-cache"
    outside = home / "outside"
    outside.mkdir()
    (cache_dir / "summaries").mkdir(parents=True)
    for n in range(256):
        (cache_dir / "summaries" / f"{n:02x}").symlink_to(outside)
    (cache_dir / "packs").symlink_to(outside)
    assert lint(repo, home, "--cache-dir", str(cache_dir)).returncode == 1
    assert list(outside.iterdir()) == []


def test_a_device_named_as_the_baseline_is_refused_before_anything_is_written(repo):
    # What `--write-baseline /dev/null` asks, checked without a run (a run as root on the previous
    # main replaced /dev/null with a plain file).
    from attn_lint.linter.userfiles import Refused, output_target
    with pytest.raises(Refused, match="it is a device"):
        output_target("/dev/null", str(repo), "baseline /dev/null")
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
