"""[tool.attn-lint] in pyproject.toml: discovery, validation, precedence, --show-settings."""

from __future__ import annotations

import json
import os
import textwrap

import pytest
from click.testing import CliRunner
from small_trees import TREES

from attn_lint.linter.app.cli import main
from attn_lint.linter.app.config import ConfigError, find_project_root, load_config, resolve
from attn_lint.linter.perfile.cache import default_cache_dir


def make_tree(root, pyproject: str | None = None, code: str = "AL001") -> None:
    """The rule's own INVALID example as a package under `root`, plus an optional pyproject."""
    for rel, src in TREES[code].items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(src)
        (p.parent / "__init__.py").touch()
    if pyproject is not None:
        (root / "pyproject.toml").write_text(textwrap.dedent(pyproject))


def cli(*args, cwd=None):
    runner = CliRunner()
    old = os.getcwd()
    try:
        if cwd:
            os.chdir(cwd)
        return runner.invoke(main, ["--no-cache", *args], catch_exceptions=False)
    finally:
        os.chdir(old)


def test_root_is_nearest_pyproject_with_table(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.attn-lint]\nselect = ["AL001"]\n')
    inner = tmp_path / "pkg" / "sub"
    inner.mkdir(parents=True)
    (tmp_path / "pkg" / "pyproject.toml").write_text('[project]\nname = "x"\n')  # no table: skipped
    root, path = find_project_root(str(inner))
    assert root == str(tmp_path) and path == str(tmp_path / "pyproject.toml")


def test_root_falls_back_to_git_root(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "a" / "b").mkdir(parents=True)
    root, path = find_project_root(str(tmp_path / "a" / "b"))
    assert root == str(tmp_path) and path is None


def test_all_keys_parse(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "pyproject.toml").write_text(textwrap.dedent('''
        [tool.attn-lint]
        select = ["AL0"]
        ignore = ["AL003"]
        exclude = ["legacy/*"]
        src = ["src"]
        extra-family-bases = ["pkg.layers.AttentionBackend"]
        cache-dir = ".cache/al"
        jobs = 2
        astroid = false
        format = "concise"
        [tool.attn-lint.per-file-ignores]
        "tests/*" = ["AL002"]
        [tool.attn-lint.severity]
        AL003 = "error"
    '''))
    cfg = load_config(str(tmp_path / "pyproject.toml"), str(tmp_path))
    assert cfg.select == ("AL0",) and cfg.ignore == ("AL003",)
    assert cfg.exclude == ("legacy/*",) and cfg.src == ("src",)
    assert cfg.per_file_ignores == {"tests/*": ("AL002",)}
    assert cfg.severity == {"AL003": "error"}
    assert cfg.extra_family_bases == ("pkg.layers.AttentionBackend",)
    assert cfg.cache_dir == os.path.join(default_cache_dir(), ".cache", "al")  # the user's, never the repo's
    assert (cfg.jobs, cfg.astroid, cfg.format) == (2, False, "concise")


@pytest.mark.parametrize("body, key", [
    ('selekt = ["AL001"]', "selekt"),
    ('select = ["AL999"]', "select"),
    ('ignore = "AL8"', "ignore"),
    ('severity = {AL001 = "fatal"}', "severity.AL001"),
    ('severity = {AL077 = "error"}', "severity"),
    ('jobs = -1', "jobs"),
    ('jobs = true', "jobs"),
    ('astroid = "yes"', "astroid"),
    ('src = ["nope"]', "src"),
    ('exclude = [1]', "exclude"),
    ('per-file-ignores = ["x"]', "per-file-ignores"),
    ('per-file-ignores = {"t/*" = ["XX1"]}', "per-file-ignores"),
    ('extra-family-bases = ["Base"]', "extra-family-bases"),
    ('format = "xml"', "format"),
])
def test_bad_keys_and_values_name_the_key(tmp_path, body, key):
    (tmp_path / "pyproject.toml").write_text(f"[tool.attn-lint]\n{body}\n")
    with pytest.raises(ConfigError) as err:
        load_config(str(tmp_path / "pyproject.toml"), str(tmp_path))
    assert f"`{key}" in str(err.value)
    # and through the command line: one line, exit 2
    r = cli("--show-settings", str(tmp_path), cwd=tmp_path)
    assert r.exit_code == 2
    assert "configuration error" in r.stderr and f"`{key}" in r.stderr
    assert "Traceback" not in r.output


def test_unknown_key_suggests_spelling(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.attn-lint]\nper_file_ignores = {}\n')
    with pytest.raises(ConfigError, match="did you mean `per-file-ignores`"):
        load_config(str(tmp_path / "pyproject.toml"), str(tmp_path))


def test_invalid_toml_is_an_error(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.attn-lint]\nselect = [\n')
    r = cli("--show-settings", ".", cwd=tmp_path)
    assert r.exit_code == 2 and "not valid TOML" in r.stderr


def test_config_applies_and_cli_overrides(tmp_path):
    make_tree(tmp_path, '[tool.attn-lint]\nignore = ["AL001"]\n')
    r = cli("--format", "json", ".", cwd=tmp_path)
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["findings"] == []
    r = cli("--format", "json", "--ignore", "AL003", ".", cwd=tmp_path)  # CLI replaces the file's ignore
    assert r.exit_code == 1
    assert [f["code"] for f in json.loads(r.stdout)["findings"]] == ["AL001"]
    r = cli("--isolated", "--format", "json", ".", cwd=tmp_path)
    assert r.exit_code == 1


def test_show_settings_reports_sources(tmp_path):
    make_tree(tmp_path, '''
        [tool.attn-lint]
        select = ["AL001", "AL002"]
        src = ["serving"]
        extra-family-bases = ["serving.backends.Backend"]
        [tool.attn-lint.severity]
        AL002 = "warning"
    ''')
    r = cli("--show-settings", "--ignore", "AL002", cwd=tmp_path)
    assert r.exit_code == 0, r.output
    out = r.stdout
    assert 'select             = ["AL001", "AL002"]    # pyproject.toml' in out
    assert 'ignore             = ["AL002"]    # command line' in out
    assert 'rules              = ["AL001"]' in out
    assert 'paths              = ["serving"]    # src' in out
    assert '"AL002": "warning"' in out
    assert "serving.backends.Backend" in out
    assert f"config-file        = {tmp_path / 'pyproject.toml'}" in out


def test_src_is_the_default_path_and_paths_are_shown_from_cwd(tmp_path):
    make_tree(tmp_path, '[tool.attn-lint]\nsrc = ["serving"]\n')
    r = cli("--format", "concise", cwd=tmp_path)
    assert r.exit_code == 1
    assert r.stdout.startswith("serving/backends.py:")


def test_no_paths_and_no_config_analyses_the_project_root(tmp_path):
    """As --help says: without `src`, the project root (here the git root above the cwd)."""
    make_tree(tmp_path)
    (tmp_path / ".git").mkdir()
    (tmp_path / "deeper").mkdir()
    r = cli("--format", "json", cwd=tmp_path / "deeper")
    assert r.exit_code == 1, r.output
    assert [f["member"] for f in json.loads(r.stdout)["findings"]] == ["plan_chunks"]


def test_exclude_globs_are_relative_to_the_root(tmp_path):
    make_tree(tmp_path, '[tool.attn-lint]\nexclude = ["serving/model.py"]\n')
    # analysed through the subfolder: the glob still applies (no probe left, so no AL001)
    r = cli("--format", "json", "serving", cwd=tmp_path)
    assert r.exit_code == 0
    assert json.loads(r.stdout)["stats"]["files"] == 2


def test_per_file_ignores_and_severity(tmp_path):
    make_tree(tmp_path, '''
        [tool.attn-lint]
        [tool.attn-lint.per-file-ignores]
        "serving/back*.py" = ["AL001"]
    ''')
    r = cli("--format", "json", ".", cwd=tmp_path)
    assert r.exit_code == 0 and json.loads(r.stdout)["stats"]["per_file_ignored"] == 1
    (tmp_path / "pyproject.toml").write_text('[tool.attn-lint]\nseverity = {AL001 = "info"}\n')
    r = cli("--format", "json", ".", cwd=tmp_path)
    assert [f["severity"] for f in json.loads(r.stdout)["findings"]] == ["info"]


def test_config_file_option_and_cli_select_validation(tmp_path):
    make_tree(tmp_path)
    other = tmp_path / "conf" / "pyproject.toml"
    other.parent.mkdir()
    other.write_text('[tool.attn-lint]\nselect = ["AL002"]\n')
    r = cli("--config", str(other), "--format", "json", ".", cwd=tmp_path)
    assert r.exit_code == 0
    r = cli("--select", "AL123", ".", cwd=tmp_path)
    assert r.exit_code == 2 and "AL123" in r.stderr


def test_resolve_precedence_unit(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.attn-lint]\njobs = 1\nastroid = false\ncache-dir = "c"\n')
    res = resolve((str(tmp_path),))
    assert res.settings.jobs == 1 and res.settings.astroid is False
    assert res.settings.cache_dir == os.path.join(default_cache_dir(), "c")
    res = resolve((str(tmp_path),), jobs=3, no_cache=True)
    assert res.settings.jobs == 3 and res.settings.cache_dir is None
    assert res.sources["jobs"] == "command line" and res.sources["astroid"] == "pyproject.toml"


def _generated(name: str) -> str | None:
    import re
    with open(os.path.join(os.path.dirname(__file__), "..", "docs", "usage.md"), encoding="utf-8") as fh:
        block = re.search(rf"<!-- generated: {name} -->\n(.*?)<!-- end generated: {name} -->", fh.read(), re.S)
    return block.group(1) if block else None


def test_every_key_is_declared_once_and_documented():
    """A key of [tool.attn-lint] is one ConfigKey (issue 39: "an option touches about ten places"):
    it names a Config field, and docs/usage.md's key list is generated from the declarations."""
    import dataclasses

    from attn_lint.linter.app.config import CONFIG_KEYS, Config
    from attn_lint.linter.app.options import keys_markdown

    fields = {f.name for f in dataclasses.fields(Config)} - {"root", "path", "sources"}
    assert sorted(k.field for k in CONFIG_KEYS) == sorted(fields)
    assert len({k.key for k in CONFIG_KEYS}) == len(CONFIG_KEYS)
    assert _generated("config keys") == keys_markdown(), \
        "docs/usage.md's key list is out of date: python -m attn_lint.linter.app.options docs/usage.md"


def test_every_option_is_declared_once_and_documented():
    """An option of `check` is one Option: `--help` shows its declaration, CheckRequest has its
    field (the command's parameters arrive there), the key it replaces is a declared one, and
    docs/usage.md's option table is generated from the declarations."""
    import dataclasses

    from attn_lint.linter.app.cli import CheckRequest, check
    from attn_lint.linter.app.config import CONFIG_KEYS
    from attn_lint.linter.app.options import CHECK_OPTIONS, options_markdown

    names = [o.name for o in CHECK_OPTIONS]
    assert len(set(names)) == len(names)
    assert sorted(f.name for f in dataclasses.fields(CheckRequest)) == sorted(["paths", *names])
    assert [p.name for p in check.params if p.name not in ("paths", "version")] == names
    assert {o.config for o in CHECK_OPTIONS if o.config} <= {k.key for k in CONFIG_KEYS}
    assert _generated("check options") == options_markdown(), \
        "docs/usage.md's option table is out of date: python -m attn_lint.linter.app.options docs/usage.md"


def test_the_usage_tables_writer(tmp_path):
    """The command that makes docs/usage.md's generated blocks: a stale block is rewritten (and
    `--check` says so), the prose around it is kept, a current file is left alone."""
    from attn_lint.linter.app import options
    doc = os.path.join(os.path.dirname(__file__), "..", "docs", "usage.md")
    assert options.main(["--check", doc]) == 0
    with open(doc, encoding="utf-8") as fh:
        current = fh.read()
    stale = current.replace(options.keys_markdown(), "| key | stale |\n", 1)
    assert stale != current
    copy = tmp_path / "usage.md"
    copy.write_text(stale, encoding="utf-8")
    assert options.main(["--check", str(copy)]) == 1 and copy.read_text(encoding="utf-8") == stale
    assert options.main([str(copy)]) == 0 and copy.read_text(encoding="utf-8") == current
    copy.write_text("no blocks here\n", encoding="utf-8")
    assert options.main([str(copy)]) == 2


def test_a_key_reads_through_its_declaration(tmp_path, monkeypatch):
    """The table is read only through CONFIG_KEYS: a key declared there is accepted and checked by
    its own reader; one that is not is an unknown key."""
    from attn_lint.linter.app import config

    toml = tmp_path / "pyproject.toml"
    toml.write_text('[tool.attn-lint]\njobs = 2\nfail-on = "high"\n')
    cfg = config.load_config(str(toml), str(tmp_path))
    assert (cfg.jobs, cfg.fail_on, cfg.sources["jobs"]) == (2, "high", "pyproject.toml")
    toml.write_text('[tool.attn-lint]\nfail-on = "low"\n')
    with pytest.raises(config.ConfigError, match="fail-on"):
        config.load_config(str(toml), str(tmp_path))
    monkeypatch.setattr(config, "_BY_KEY", {k: v for k, v in config._BY_KEY.items() if k != "jobs"})
    toml.write_text('[tool.attn-lint]\njobs = 2\n')
    with pytest.raises(config.ConfigError, match="unknown key `jobs`"):
        config.load_config(str(toml), str(tmp_path))
