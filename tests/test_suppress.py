"""Inline suppressions: # noqa, # noqa: AL001, # attn-lint: ignore[AL001]; unused ones reported."""

from __future__ import annotations

import json
import os

import pytest
from click.testing import CliRunner
from small_trees import TREES

from attn_lint.linter.app.cli import main
from attn_lint.linter.files.suppress import parse_comment, scan_source


def make_tree(root, code: str, replace: tuple[str, str] | None = None, path: str = "serving/backends.py"):
    for rel, src in TREES[code].items():
        if replace and rel == path:
            assert replace[0] in src, replace[0]
            src = src.replace(replace[0], replace[1], 1)
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(src)
        (p.parent / "__init__.py").touch()


def run(root, *args):
    old = os.getcwd()
    os.chdir(root)
    try:
        r = CliRunner().invoke(main, ["--no-cache", "--format", "json", *args, "."], catch_exceptions=False)
    finally:
        os.chdir(old)
    return r.exit_code, json.loads(r.stdout)


CLASS_LINE = "class HybridBackend(Backend):"
CALL_LINE = "hook(batch, disable_ragged)"


def test_baseline_without_comments(tmp_path):
    make_tree(tmp_path, "AL001")
    code, doc = run(tmp_path)
    assert code == 1 and [f["code"] for f in doc["findings"]] == ["AL001"]
    assert doc["stats"]["suppressed"] == 0


@pytest.mark.parametrize("comment", ["# noqa: AL001", "# noqa", "# NOQA:AL001", "# noqa: AL0",
                                     "# attn-lint: ignore[AL001]", "# attn-lint: ignore",
                                     "# noqa: E501, AL001  (hybrid forwards via __init__ hook)",
                                     "# attn-lint: ignore[AL002, AL001]"])
def test_class_line_suppresses_al001(tmp_path, comment):
    make_tree(tmp_path, "AL001", (CLASS_LINE, f"{CLASS_LINE}  {comment}"))
    code, doc = run(tmp_path)
    assert code == 0 and doc["findings"] == []
    assert doc["stats"]["suppressed"] == 1


@pytest.mark.parametrize("comment", ["# noqa: AL002", "# noqa: E501", "# attn-lint: ignore[AL003]",
                                     "# noqa AL001 is not the syntax"])
def test_other_codes_do_not_suppress(tmp_path, comment):
    make_tree(tmp_path, "AL001", (CLASS_LINE, f"{CLASS_LINE}  {comment}"))
    code, doc = run(tmp_path)
    if comment.startswith("# noqa AL001"):
        # a bare noqa (text after it and no colon is not a code list), as in flake8
        assert code == 0
    else:
        assert code == 1 and [f["code"] for f in doc["findings"]] == ["AL001"]


def test_multi_line_class_header(tmp_path):
    make_tree(tmp_path, "AL001", (CLASS_LINE, "class HybridBackend(\n    Backend,\n):  # noqa: AL001"))
    code, doc = run(tmp_path)
    assert code == 0 and doc["stats"]["suppressed"] == 1


def test_al002_on_the_call_line(tmp_path):
    make_tree(tmp_path, "AL002", (CALL_LINE, f"{CALL_LINE}  # noqa: AL002"))
    code, doc = run(tmp_path)
    assert code == 0 and doc["stats"]["suppressed"] == 1


def test_al002_on_the_enclosing_class_line(tmp_path):
    make_tree(tmp_path, "AL002", (CLASS_LINE, f"{CLASS_LINE}  # attn-lint: ignore[AL002]"))
    code, doc = run(tmp_path)
    assert code == 0 and doc["stats"]["suppressed"] == 1


def test_al002_elsewhere_does_not_suppress(tmp_path):
    make_tree(tmp_path, "AL002", ("def forward(self, batch):\n        return self.full",
                                  "def forward(self, batch):  # noqa: AL002\n        return self.full"))
    code, doc = run(tmp_path)
    assert code == 1 and [f["code"] for f in doc["findings"]] == ["AL002"]


def test_comment_text_inside_a_string_is_not_a_comment(tmp_path):
    make_tree(tmp_path, "AL002", (CALL_LINE, 'hook(batch, "# noqa: AL002")'))
    code, doc = run(tmp_path)
    assert code == 1 and [f["code"] for f in doc["findings"]] == ["AL002"]


def test_unused_suppressions_are_reported(tmp_path):
    make_tree(tmp_path, "AL001", (CLASS_LINE, f"{CLASS_LINE}  # noqa: AL001"))
    model = tmp_path / "serving" / "model.py"
    model.write_text(model.read_text()
                     + "\nX = 1  # noqa: AL002\nY = 2  # noqa\nZ = 3  # noqa: E501\n"
                     + "W = 4  # attn-lint: ignore[AL003]\n")
    code, doc = run(tmp_path)
    assert code == 0  # not reported unless asked
    code, doc = run(tmp_path, "--report-unused-suppressions")
    assert code == 1
    unused = [(f["code"], f["path"], f["line"]) for f in doc["findings"]]
    n = len(model.read_text().splitlines())
    assert unused == [("AL900", "serving/model.py", n - 3), ("AL900", "serving/model.py", n)]
    assert "AL002" in doc["findings"][0]["message"]
    assert doc["stats"]["by_rule"]["AL900"] == 2


def test_unused_respects_the_selected_rules(tmp_path):
    make_tree(tmp_path, "AL001")
    (tmp_path / "serving" / "extra.py").write_text("A = 1  # noqa: AL002\n")
    code, doc = run(tmp_path, "--report-unused-suppressions", "--select", "AL001")
    assert code == 1 and [f["code"] for f in doc["findings"]] == ["AL001"]


def test_parse_comment_forms():
    (s,) = parse_comment("# noqa: AL001,AL002", 3, 4)
    assert s.codes == frozenset({"AL001", "AL002"}) and not s.ours
    (s,) = parse_comment("# noqa", 1, 0)
    assert s.codes is None
    (s,) = parse_comment("# attn-lint: ignore[al003]", 1, 0)
    assert s.codes == frozenset({"AL003"}) and s.ours
    assert parse_comment("# nothing here", 1, 0) == []


def test_scan_source_ignores_strings():
    text = 'x = "# noqa: AL001"\ny = 1  # noqa: AL002\n'
    found = scan_source(text)
    assert list(found) == [2]


def test_class_line_in_a_tree_with_several_projects(tmp_path):
    """Two projects with the same package name: the index labels their modules; suppression still works."""
    for proj in ("a", "b"):
        make_tree(tmp_path / proj, "AL002", (CLASS_LINE, f"{CLASS_LINE}  # noqa: AL002") if proj == "a" else None)
    code, doc = run(tmp_path)
    assert code == 1
    assert [f["path"] for f in doc["findings"]] == ["b/serving/backends.py"]
    assert doc["stats"]["suppressed"] == 1


def test_select_al900_reports_unused_suppressions(tmp_path):
    """Issue 12: `attn-lint rules` lists AL900 but `--select AL900` was refused."""
    make_tree(tmp_path, "AL001")
    (tmp_path / "serving" / "extra.py").write_text("A = 1  # noqa: AL002\n")
    code, doc = run(tmp_path, "--select", "AL900")
    assert code == 1 and [f["code"] for f in doc["findings"]] == ["AL900"]  # the AL001 finding is not asked for
    (tmp_path / "serving" / "extra.py").write_text("A = 1  # noqa: AL001\n")
    code, doc = run(tmp_path, "--select", "AL001,AL900")
    assert sorted(f["code"] for f in doc["findings"]) == ["AL001", "AL900"]


def test_al900_in_pyproject_select_and_ignore(tmp_path):
    """Issue 12: `select = ["AL900"]` in pyproject.toml was a configuration error although
    `attn-lint rules` lists AL900; `ignore` naming it turns the report off, flag or not."""
    make_tree(tmp_path, "AL001")
    (tmp_path / "serving" / "extra.py").write_text("A = 1  # noqa: AL002\n")
    (tmp_path / "pyproject.toml").write_text('[tool.attn-lint]\nselect = ["AL900"]\n')
    code, doc = run(tmp_path)
    assert code == 1 and [f["code"] for f in doc["findings"]] == ["AL900"]
    (tmp_path / "pyproject.toml").write_text('[tool.attn-lint]\nselect = ["ALL"]\n')  # AL900 is opt-in
    code, doc = run(tmp_path)
    assert [f["code"] for f in doc["findings"]] == ["AL001"]
    (tmp_path / "pyproject.toml").write_text('[tool.attn-lint]\nignore = ["AL900"]\n')
    code, doc = run(tmp_path, "--report-unused-suppressions")
    assert [f["code"] for f in doc["findings"]] == ["AL001"]
    (tmp_path / "pyproject.toml").unlink()
    code, doc = run(tmp_path, "--select", "AL9")  # a prefix of AL900 only
    assert [f["code"] for f in doc["findings"]] == ["AL900"]
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        r = CliRunner().invoke(main, ["--show-settings", "--select", "AL001,AL900"])
    finally:
        os.chdir(old)
    assert '["AL001", "AL900"]    # command line' in r.stdout
    assert 'rules              = ["AL001", "AL900"]' in r.stdout
