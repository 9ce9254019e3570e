"""The scope of the analysis is not the scope of the report (issue 38).

Before: `attn-lint serving/backends/` analysed that folder alone and said "No findings", though the
run on `serving/` reports a finding located in it: the probe that makes the hook matter lies in
`serving/models/`. A plug-in analysed alone got "No findings" with no word that its families are
cut off at its host's classes. Now a path is analysed within its top-level package (or the
configured `src`), the report keeps what is located in the path or cites it, and a plug-in is
analysed with its host's source as context, the host's own findings left out.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap

import pytest
from conftest import FIXTURES

AL001 = FIXTURES / "al001_hidden_hook"


def attn_lint(*args, cwd, env=None):
    full = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    full.update(env or {})
    return subprocess.run([sys.executable, "-m", "attn_lint", "--no-cache", "--no-server", *map(str, args)],
                          capture_output=True, text=True, cwd=cwd, env=full, timeout=120)


def findings(out) -> list[dict]:
    return json.loads(out.stdout)["findings"]


def test_a_folder_of_backends_reports_the_drift_located_in_it():
    out = attn_lint("--format", "json", "serving/backends", cwd=AL001)
    got = findings(out)
    assert out.returncode == 1 and [(f["code"], f["path"]) for f in got] == \
        [("AL001", "serving/backends/hybrid_linear_attn_backend.py")]
    assert "cited_in_paths" not in got[0]["details"]
    alone = attn_lint("--no-context", "--format", "json", "serving/backends", cwd=AL001)
    assert alone.returncode == 0 and findings(alone) == []  # what the folder alone shows: nothing


def test_the_report_says_what_was_analysed_around_the_paths():
    out = attn_lint("serving/backends", cwd=AL001)
    assert "note: analysed serving around serving/backends" in out.stderr
    assert "--no-context analyses the paths alone" in out.stderr


def test_a_finding_located_elsewhere_is_shown_where_its_evidence_cites_the_path():
    out = attn_lint("--format", "json", "serving/models", cwd=AL001)
    got = findings(out)
    assert [f["path"] for f in got] == ["serving/backends/hybrid_linear_attn_backend.py"]
    assert got[0]["details"]["cited_in_paths"].startswith("serving/models/")
    text = attn_lint("serving/models", cwd=AL001)
    assert "shown: its evidence cites serving/models/" in text.stdout
    assert "and 1 whose evidence cites them" in text.stderr


def test_a_file_the_finding_does_not_touch_reports_none_and_counts_the_rest():
    out = attn_lint("serving/backends/triton_backend.py", cwd=AL001)
    assert out.returncode == 0 and "No findings" in out.stdout
    assert "not shown: 1 elsewhere in the code analysed" in out.stderr
    mine = attn_lint("--format", "json", "serving/backends/hybrid_linear_attn_backend.py", cwd=AL001)
    assert len(findings(mine)) == 1


@pytest.mark.parametrize("given", ["corp/serving/backends", "corp/serving"])
def test_a_namespace_package_reports_what_the_regular_one_does(tmp_path, given):
    """`corp/` without `__init__.py` (PEP 420), and `corp/serving/` without one too where it is
    the folder given (sglang 0.5.23's `sglang/srt` is such a folder): the modules are named from
    the imports (`corp.serving...`), and the package around the folder is `corp`."""
    reports = []
    for regular in (True, False):
        root = tmp_path / str(regular)
        shutil.copytree(AL001 / "serving", root / "corp" / "serving")
        for path in (root / "corp").rglob("*.py"):
            path.write_text(path.read_text().replace("from serving.", "from corp.serving.")
                            .replace("import serving.", "import corp.serving."))
        (root / "corp" / "extra.py").write_text("VALUE = 1\n")  # the package holds more than the folder given
        if regular:
            (root / "corp" / "__init__.py").write_text("")
        elif given == "corp/serving":
            (root / "corp" / "serving" / "__init__.py").unlink()
        out = attn_lint("--format", "json", given, cwd=root)
        got = findings(out)
        assert json.loads(out.stdout)["stats"]["files"] == len(list((root / "corp").rglob("*.py")))  # all of corp
        reports.append([(f["code"], f["path"], f["line"]) for f in got])
    assert reports[0] and reports[0] == reports[1]


def test_the_configured_src_is_the_project(tmp_path):
    shutil.copytree(AL001 / "serving", tmp_path / "lib" / "serving")
    (tmp_path / "lib" / "serving" / "__init__.py").unlink()  # no package: the folder is its own top
    (tmp_path / "pyproject.toml").write_text('[tool.attn-lint]\nsrc = ["lib"]\n')
    for path in (tmp_path / "lib").rglob("*.py"):
        path.write_text(path.read_text())
    got = findings(attn_lint("--format", "json", "lib/serving/backends", cwd=tmp_path))
    assert [f["code"] for f in got] == ["AL001"]


# --- a plug-in and its host ---------------------------------------------------------------------

_HOST_CONNECTOR = """
class Connector:
    def __init__(self, role: str):
        self.role = role

    def save(self, data):
        raise NotImplementedError

    def shutdown(self) -> None:
        return None


class HostWorker(Connector):
    def save(self, data):
        self.data = data

    def shutdown(self) -> None:
        self.data = None


class HostWrapper(Connector):
    def __init__(self, role: str):
        super().__init__(role)
        self.inner = HostWorker(role)

    def save(self, data):
        self.inner.save(data)
"""
_HOST_STATE = """
from hostpkg.connector import Connector, HostWrapper

_AGENT = None


def start(role: str) -> None:
    global _AGENT
    _AGENT = HostWrapper(role)


def ensure_shutdown(agent: Connector) -> None:
    agent.shutdown()
"""
_PLUG_CONNECTOR = """
from hostpkg.connector import Connector


class PlugWorker(Connector):
    def save(self, data):
        self.buffer = data

    def shutdown(self) -> None:
        self.buffer = None


class PlugConnector(Connector):
    def __init__(self, role: str):
        super().__init__(role)
        self._impl = PlugWorker(role)

    def save(self, data):
        self._impl.save(data)
"""


def plugin_tree(tmp_path, parts: int = 12):
    """`host/hostpkg`: a connector family with its own drift (HostWrapper) and a call site; and
    `plugin/plugpkg`: a wrapper of its own over a worker of its own, plus `parts` classes each
    extending a different class of the host (what a plug-in does)."""
    host, plug = tmp_path / "host" / "hostpkg", tmp_path / "plugin" / "plugpkg"
    host.mkdir(parents=True)
    plug.mkdir(parents=True)
    names = [f"Part{i}" for i in range(parts)]
    (host / "__init__.py").write_text("")
    (host / "connector.py").write_text(_HOST_CONNECTOR)
    (host / "state.py").write_text(_HOST_STATE)
    (host / "parts.py").write_text("".join(f"class {n}:\n    def run(self):\n        return {i}\n\n\n"
                                           for i, n in enumerate(names)))
    (plug / "__init__.py").write_text("")
    (plug / "connector.py").write_text(_PLUG_CONNECTOR)
    (plug / "parts.py").write_text(
        (f"from hostpkg.parts import {', '.join(names)}\n\n\n" if names else "")
        + "".join(f"class My{n}({n}):\n    def run(self):\n        return -{i}\n\n\n" for i, n in enumerate(names)))
    return tmp_path


def test_a_plugin_is_analysed_with_its_host_and_reports_its_own_drift(tmp_path):
    tree = plugin_tree(tmp_path)
    for how in (("--host", tree / "host"), ()):
        env = {} if how else {"PYTHONPATH": str(tree / "host")}  # named, or found as an import finds it
        out = attn_lint("--format", "json", *how, "plugpkg", cwd=tree / "plugin", env=env)
        got = findings(out)
        assert [(f["code"], f["class"].rsplit(".", 1)[-1]) for f in got] == [("AL003", "PlugConnector")], out.stderr
        assert "HostWrapper" not in out.stdout  # the host's own drift is the host's to report
        assert "analysed with its source at" in out.stderr and "findings of `hostpkg` alone are not reported" \
            in out.stderr


def test_a_plugin_whose_host_is_missing_says_so(tmp_path):
    tree = plugin_tree(tmp_path)
    out = attn_lint("plugpkg", cwd=tree / "plugin")
    assert out.returncode == 0 and "No findings" in out.stdout
    assert "whose source is not on the import path: families are cut off" in out.stderr
    assert "--host FOLDER" in out.stderr
    quiet = attn_lint("--no-context", "plugpkg", cwd=tree / "plugin")
    assert "import path" not in quiet.stderr


def test_a_package_extending_a_few_classes_many_times_is_no_plugin(tmp_path):
    """A framework the tree builds on (a dozen base classes, each extended many times) is no host:
    reading its source would cost every run for nothing the drift depends on. (Twelve distinct
    bases under 60 of the tree's classes: enough distinct bases and share for a host, but one
    distinct base per five deriving classes, under the spread a plug-in shows.)"""
    tree = plugin_tree(tmp_path, parts=0)
    bases = [f"Module{j}" for j in range(12)]
    many = f"from hostpkg.parts_one import {', '.join(bases)}\n\n\n" + "".join(
        f"class Layer{i}({bases[i % 12]}):\n    pass\n\n\n" for i in range(60))
    (tree / "host" / "hostpkg" / "parts_one.py").write_text("".join(f"class {b}:\n    pass\n\n\n" for b in bases))
    (tree / "plugin" / "plugpkg" / "parts.py").write_text(many)
    out = attn_lint("--format", "json", "plugpkg", cwd=tree / "plugin", env={"PYTHONPATH": str(tree / "host")})
    assert findings(out) == [] and "hostpkg" not in out.stderr


def test_new_since_reads_the_host_as_it_is(tmp_path):
    tree = plugin_tree(tmp_path)
    repo = tree / "plugin"
    git = ["git", "-c", "user.email=t@t", "-c", "user.name=t", "-c", "commit.gpgsign=false"]
    subprocess.run([*git, "init", "-q"], cwd=repo, check=True)
    subprocess.run([*git, "add", "-A"], cwd=repo, check=True)
    subprocess.run([*git, "commit", "-qm", "plug-in"], cwd=repo, check=True)
    (repo / "plugpkg" / "connector.py").write_text(_PLUG_CONNECTOR + "\n# a comment\n")
    out = attn_lint("--new-since", "HEAD", "--host", tree / "host", "plugpkg", cwd=repo)
    assert out.returncode == 0, out.stdout + out.stderr  # the wrapper's drift was there before
    assert "already at HEAD" in out.stderr
    (repo / "plugpkg" / "extra.py").write_text(textwrap.dedent(_PLUG_CONNECTOR).replace("Plug", "Other"))
    out = attn_lint("--new-since", "HEAD", "--host", tree / "host", "plugpkg", cwd=repo)
    assert out.returncode == 1 and "OtherConnector" in out.stdout


def test_a_tree_named_from_below_its_package_is_warned_about(tmp_path):
    """The files import `serving.backends.x`, but the folder analysed is the package's inside
    (copied without its `__init__.py` and its name): the run names them `backends.x`. Said on
    stderr with the fix; a tree whose names agree with its imports gets no such line."""
    copy = tmp_path / "copy"
    shutil.copytree(AL001 / "serving", copy)
    (copy / "__init__.py").unlink()
    out = attn_lint("--no-context", "copy", cwd=tmp_path)
    assert "imports of its own modules name them from a folder above the one analysed" in out.stderr
    assert "Analyse from the folder that holds the top-level package" in out.stderr
    fine = attn_lint("serving", cwd=AL001)
    assert "folder above the one analysed" not in fine.stderr


def test_fix_writes_only_the_files_of_the_paths_given(tmp_path):
    """`--fix serving/models` shows the wrapper's finding (its evidence cites the folder) but does
    not edit `serving/backends/`: only the paths given are written, as ruff does."""
    shutil.copytree(AL001, tmp_path / "t")
    root = tmp_path / "t"
    wrapper = root / "serving" / "backends" / "hybrid_linear_attn_backend.py"
    before = wrapper.read_text()
    out = attn_lint("--fix", "serving/models", cwd=root)
    assert wrapper.read_text() == before
    assert "leaves 1 finding located outside the paths given as they are" in out.stderr
    out = attn_lint("--fix", "serving/backends", cwd=root)
    assert wrapper.read_text() != before and "fixed 1 finding" in out.stderr, out.stderr


def test_a_host_reached_through_a_link_out_of_its_folder_is_not_read(tmp_path):
    """A folder on the import path holding `hostpkg` as a link to somewhere else (a repository on
    the path could plant one) does not make the run read where it points."""
    tree = plugin_tree(tmp_path)
    on_path = tmp_path / "on_path"
    on_path.mkdir()
    (on_path / "hostpkg").symlink_to(tree / "host" / "hostpkg", target_is_directory=True)
    out = attn_lint("plugpkg", cwd=tree / "plugin", env={"PYTHONPATH": str(on_path)})
    assert "whose source is not on the import path" in out.stderr and "PlugConnector" not in out.stdout
    direct = attn_lint("plugpkg", cwd=tree / "plugin", env={"PYTHONPATH": str(tree / "host")})
    assert "analysed with its source" in direct.stderr
