"""Discovery lists folders itself (os.scandir) so that a plain file costs no system call of its own:
the files, their order, module names, duplicates through links and the per-file diagnostics must be
what a walk with os.walk(followlinks=True) and an lstat per file gives."""

import os

import pytest

from attn_lint.linter.files.discover import NOT_REGULAR, discover


@pytest.fixture
def tree(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "ns" / "deep").mkdir(parents=True)
    (pkg / "__pycache__").mkdir()
    for rel in ("__init__.py", "a.py", "sub/__init__.py", "sub/b.py", "sub/b.pyi", "only.pyi",
                "ns/c.py", "ns/deep/d.py", "__pycache__/x.py", "notes.txt"):
        (pkg / rel).write_text("x = 1\n")
    os.symlink(pkg / "sub", pkg / "linked")  # the same files under a second name: listed once
    os.symlink(pkg / "a.py", pkg / "z_link.py")  # a link to a file listed already
    os.symlink(pkg / "missing.py", pkg / "broken.py")
    os.mkfifo(pkg / "fifo.py")
    return tmp_path


def test_files_order_modules_and_diagnostics(tree):
    files, errors = discover([str(tree / "pkg")])
    assert [(f.display, f.module) for f in files] == [
        ("__init__.py", "pkg"),
        ("a.py", "pkg.a"),
        ("only.pyi", "pkg.only"),  # a stub without its source is read
        ("linked/__init__.py", "pkg.linked"),  # the link sorts before the folder it names
        ("linked/b.py", "pkg.linked.b"),
        ("ns/c.py", "pkg.ns.c"),  # a namespace folder inside a package
        ("ns/deep/d.py", "pkg.ns.deep.d"),
    ]
    assert all(f.root == str(tree) for f in files)
    assert sorted((e.path, e.kind, e.message) for e in errors) == [
        ("broken.py", "unreadable", "broken symbolic link"),
        ("fifo.py", "unreadable", NOT_REGULAR),
        # the folder the link named, met again under its own name
        ("sub", "symlink-loop", "directory already visited through another path (symlink loop); skipped"),
    ]


def test_exclusions_and_a_symlink_loop(tree):
    os.symlink(tree / "pkg", tree / "pkg" / "ns" / "loop")
    files, errors = discover([str(tree / "pkg")], exclude=("ns/deep",))
    assert "ns/deep/d.py" not in [f.display for f in files]
    assert [e.kind for e in errors if e.path == "ns/loop"] == ["symlink-loop"]


def test_a_plain_file_costs_no_system_call_of_its_own(tmp_path, monkeypatch):
    """The listing gives each entry's type: discovering a folder of many plain files takes a few
    lstat calls for the folders (their real paths), none per file."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    for n in range(60):
        (pkg / f"m{n}.py").write_text("x = 1\n")
    calls = []
    lstat = os.lstat

    def counted(path, *args, **kwargs):
        calls.append(path)
        return lstat(path, *args, **kwargs)

    monkeypatch.setattr(os, "lstat", counted)
    files, errors = discover([str(pkg)])
    assert len(files) == 60 and not errors
    assert len(calls) < 20, calls
