"""`[tool.attn-lint]` in pyproject.toml: find it, validate it, merge it with the command line.

The project root is the folder of the nearest `pyproject.toml` (walking up from the first path, or
from the current directory, never above the git root) that has a `[tool.attn-lint]` table; failing
that, the nearest git root;
failing that, the current directory. Paths in the table (`exclude`, `per-file-ignores`, `src`)
are relative to that root. Command-line options replace the file's values.

A repository's table is not trusted to reach outside the repository: `src` entries and `exclude`
globs must stay inside the project root, `jobs` is capped at the machine's cores (a note says so),
and the file itself is read only when it is a regular file of at most 4 MB. The command line,
which is the user's own, may name anything.

`cache-dir` is the exception: a repository must never choose where attn-lint reads cache entries
(a folder it ships, or one it can reach with "../", would let its files stand in for the cache).
So the table's `cache-dir` names a folder *inside the user's cache directory*
($XDG_CACHE_HOME/attn-lint/<cache-dir>); an absolute path, `~` or any `..` is a configuration
error. Only `--cache-dir` on the command line may put the cache anywhere.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    try:
        import tomli as tomllib  # type: ignore[no-redef]
    except ImportError:  # pragma: no cover
        tomllib = None  # type: ignore[assignment]

from ..files.discover import matches
from ..perfile.cache import default_cache_dir
from ..userfiles import Refused, read_regular, within
from .engine import Settings

TABLE = "tool.attn-lint"
SEVERITIES = ("error", "warning", "info")
FORMATS = ("text", "concise", "json", "sarif", "github")
# The confidences a run can be made to fail on (linter/model/confidence.py): latent drift (`low`) never does.
FAIL_ON = ("medium", "high")
_DOTTED = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+$")
MAX_CONFIG_BYTES = 4 * 2**20  # real pyproject.toml files are a few kB


class ConfigError(Exception):
    """A bad key or value; the message names the key and the file."""


@dataclass
class Config:
    """What the `[tool.attn-lint]` table says, validated (defaults where it says nothing)."""

    root: str  # absolute project root
    path: str | None = None  # the pyproject.toml that was read, if any
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    per_file_ignores: dict[str, tuple[str, ...]] = field(default_factory=dict)
    src: tuple[str, ...] = (".",)
    severity: dict[str, str] = field(default_factory=dict)
    extra_family_bases: tuple[str, ...] = ()
    cache_dir: str | None = None
    jobs: int | None = None
    astroid: bool | None = None
    server: bool | None = None
    format: str | None = None
    show_latent: bool | None = None
    fail_on: str | None = None  # the lowest confidence that fails the run ("medium" or "high")
    # Findings reviewed and set aside, by identity (linter/model/identity.py) -> the reviewer's reason.
    dismissed: dict[str, str] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)  # key -> where its value came from


def known_codes() -> tuple[str, ...]:
    from ...rules import ALL_RULES
    return tuple(r.code for r in ALL_RULES)


def names_opt_in(code: str) -> bool:
    """Whether a selector asks for opt-in rules by name (`AL9`, `AL90`, `AL900`): it covers one
    and no rule that is not opt-in, so `ALL` or `AL`, which cover every analysis rule, do not."""
    from ...rules import ALL_RULES
    covered = [r for r in ALL_RULES if r.code.startswith(code)]
    return bool(covered) and all(r.opt_in for r in covered)


def _suppression_codes() -> tuple[str, ...]:
    from ...rules import SUPPRESSION_RULES
    return tuple(r.code for r in SUPPRESSION_RULES)


def parse_codes(values, key: str, where: str, allow_all: bool = True) -> tuple[str, ...]:
    """Rule codes or code prefixes (`AL`, `AL00`, `AL001`, `AL900`); `ALL` means every rule."""
    out: list[str] = []
    if isinstance(values, str):
        values = [values]
    if not isinstance(values, (list, tuple)):
        raise ConfigError(f"{where}: `{key}` must be a list of rule codes, not {type(values).__name__}")
    codes = known_codes()
    for v in values:
        if not isinstance(v, str):
            raise ConfigError(f"{where}: `{key}` must be a list of rule codes, got {v!r}")
        for c in (x.strip().upper() for x in v.split(",")):
            if not c:
                continue
            if c == "ALL" and allow_all:
                out.append("AL")
                continue
            if not any(code.startswith(c) for code in codes):
                raise ConfigError(f"{where}: `{key}` has unknown rule code {c!r} (known: {', '.join(codes)})")
            out.append(c)
    return tuple(out)


def find_project_root(start: str | None = None) -> tuple[str, str | None]:
    """(root, pyproject path or None)."""
    here = os.path.abspath(start or os.getcwd())
    if not os.path.isdir(here):
        here = os.path.dirname(here)
    current = here
    while True:
        candidate = os.path.join(current, "pyproject.toml")
        if os.path.isfile(candidate) and _has_table(candidate):
            return current, candidate
        if os.path.lexists(os.path.join(current, ".git")):
            # Never above the repository: a file there is not the project's (a shared folder, a
            # CI workspace) and would decide what is excluded and read. --config names one.
            return current, None
        parent = os.path.dirname(current)
        if parent == current:
            break
        current = parent
    return os.path.abspath(os.getcwd()), None


def _has_table(path: str) -> bool:
    try:
        raw = read_regular(path, MAX_CONFIG_BYTES, path)
    except Refused as exc:
        if os.path.islink(path) or not os.path.isfile(path):
            return False  # a link to a device or a FIFO is no project file: look further up
        raise ConfigError(str(exc)) from None
    if b"attn-lint" not in raw:
        return False  # cheap: most pyproject files never mention us
    _need_toml()
    try:
        data = _parsed_toml(path, raw)
    except Exception as exc:  # a broken file that does mention us is an error, not silence
        if re.search(rb"^\s*\[tool\.(attn-lint|\"attn-lint\")", raw, re.M):
            raise ConfigError(f"{path}: not valid TOML: {exc}") from None
        return False
    return isinstance(data.get("tool"), dict) and "attn-lint" in data["tool"]


_TOML_SEEN: dict[str, tuple[bytes, dict]] = {}  # path -> (its bytes, parsed): finding and loading parse once


def _parsed_toml(path: str, raw: bytes) -> dict:
    seen = _TOML_SEEN.get(path)
    if seen is None or seen[0] != raw:
        seen = _TOML_SEEN[path] = (raw, tomllib.loads(raw.decode("utf-8")))
    return seen[1]


def _need_toml() -> None:
    if tomllib is None:  # pragma: no cover - Python 3.10 without tomli
        raise ConfigError("reading pyproject.toml on Python 3.10 needs the tomli package: pip install tomli")


def load_config(path: str | None, root: str) -> Config:
    if path is None:
        return Config(root=root, path=path)
    _need_toml()
    try:
        raw = read_regular(path, MAX_CONFIG_BYTES, path)
    except Refused as exc:
        raise ConfigError(str(exc)) from None
    return config_from_bytes(raw, path, root, os.path.relpath(path))


def config_from_bytes(raw: bytes, path: str, root: str, shown: str) -> Config:
    """The configuration a pyproject.toml's bytes give (`shown`: how messages name the file, say
    `REF:pyproject.toml` for a revision's)."""
    _need_toml()
    cfg = Config(root=root, path=path)
    try:
        data = _parsed_toml(path, raw)
    except Exception as exc:
        raise ConfigError(f"{shown}: not valid TOML: {exc}") from None
    tool = data.get("tool", {})
    if not isinstance(tool, dict):
        raise ConfigError(f"{shown}: `tool` must be a table, not {type(tool).__name__}")
    table = tool.get("attn-lint")
    if table is None:
        return cfg
    where = f"{shown} [{TABLE}]"
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: must be a table")
    _apply_table(cfg, table, where)
    return cfg


def hides_differently(a: Config, b: Config) -> bool:
    """Whether two configurations can differ in which findings a run shows (ConfigKey.hides)."""
    return any(getattr(a, k.field) != getattr(b, k.field) for k in CONFIG_KEYS if k.hides)


_IDENTITY = re.compile(r"^[0-9a-f]{32}$")


@dataclass(frozen=True)
class ConfigKey:
    """One key of `[tool.attn-lint]`, declared once: how its value is read and checked, what it
    means and what `--show-settings` shows for it. The table's reading, its error messages,
    `--show-settings` and the key list in docs/usage.md all come from CONFIG_KEYS (the option that
    replaces a key names it: options.py); the value lands in the Config field of the same name
    (`-` read as `_`)."""

    key: str
    read: Callable[[Config, ConfigKey, object, str], object]  # the value, checked; raises ConfigError
    means: str  # one line, for the docs
    shown: Callable[[Resolved], object]  # the value a run uses, for --show-settings
    # A change of it can hide findings a run showed: `--new-since REF` runs REF's configuration
    # too where such a key differs, and says what the change hid.
    hides: bool = False

    @property
    def field(self) -> str:
        return self.key.replace("-", "_")


def _read_codes(cfg: Config, k: ConfigKey, value, where: str) -> tuple[str, ...]:
    return parse_codes(value, k.key, where)


def _read_exclude(cfg: Config, k: ConfigKey, value, where: str) -> tuple[str, ...]:
    globs = _strings(value, k.key, where)
    for glob in globs:
        if _leaves_root(glob):
            raise ConfigError(f"{where}: `exclude` entry {glob!r} reaches outside the project root; "
                              f"globs in the configuration are relative to {cfg.root}")
    return globs


def _read_src(cfg: Config, k: ConfigKey, value, where: str) -> tuple[str, ...]:
    src = _strings(value, k.key, where)
    if not src:
        raise ConfigError(f"{where}: `src` must name at least one folder")
    real_root = os.path.realpath(cfg.root)
    for s in src:
        full = os.path.join(cfg.root, s)
        if os.path.isabs(s) or not within(os.path.realpath(full), real_root):
            raise ConfigError(f"{where}: `src` entry {s!r} lies outside the project root {cfg.root}; "
                              f"the configuration may only name folders inside it (name others on "
                              f"the command line)")
        if not os.path.exists(full):
            raise ConfigError(f"{where}: `src` entry {s!r} does not exist under {cfg.root}")
    return src


def _read_per_file_ignores(cfg: Config, k: ConfigKey, value, where: str) -> dict[str, tuple[str, ...]]:
    if not isinstance(value, dict):
        raise ConfigError(f"{where}: `per-file-ignores` must be a table of glob = [codes]")
    return {str(glob): parse_codes(codes, f"per-file-ignores.\"{glob}\"", where) for glob, codes in value.items()}


def _read_severity(cfg: Config, k: ConfigKey, value, where: str) -> dict[str, str]:
    if not isinstance(value, dict):
        raise ConfigError(f"{where}: `severity` must be a table of code = \"error\"|\"warning\"|\"info\"")
    codes = known_codes()
    out = {}
    for code, level in value.items():
        c = str(code).upper()
        if c not in codes:
            raise ConfigError(f"{where}: `severity` has unknown rule code {code!r} (known: {', '.join(codes)})")
        if level not in SEVERITIES:
            raise ConfigError(f"{where}: `severity.{code}` must be one of {', '.join(SEVERITIES)}, not {level!r}")
        out[c] = level
    return out


def _read_bases(cfg: Config, k: ConfigKey, value, where: str) -> tuple[str, ...]:
    bases = _strings(value, k.key, where)
    for b in bases:
        if not _DOTTED.match(b):
            raise ConfigError(f"{where}: `extra-family-bases` entry {b!r} is not a qualified class "
                              f"name like \"pkg.module.Base\"")
    return bases


def _read_cache_dir(cfg: Config, k: ConfigKey, value, where: str) -> str:
    return _user_cache_folder(value, where)


def _read_jobs(cfg: Config, k: ConfigKey, value, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ConfigError(f"{where}: `jobs` must be a whole number >= 0 (0: one per core), not {value!r}")
    return value


def _read_bool(cfg: Config, k: ConfigKey, value, where: str) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(f"{where}: `{k.key}` must be true or false, not {value!r}")
    return value


def _read_fail_on(cfg: Config, k: ConfigKey, value, where: str) -> str:
    if value not in FAIL_ON:
        raise ConfigError(f"{where}: `fail-on` must be one of {', '.join(map(repr, FAIL_ON))}, not {value!r}")
    return value


def _read_dismissed(cfg: Config, k: ConfigKey, value, where: str) -> dict[str, str]:
    if not isinstance(value, dict):
        raise ConfigError(f"{where}: `dismissed` must be a table of identity = \"why it is dismissed\"")
    for ident, why in value.items():
        if not _IDENTITY.match(str(ident)):
            raise ConfigError(f"{where}: `dismissed` key {str(ident)[:40]!r} is not a finding's identity "
                              f"(32 hex digits, as `--format json` or `--verbose` shows it)")
        if not isinstance(why, str) or not why.strip():
            raise ConfigError(f"{where}: `dismissed.{ident}` must say why it is dismissed (a non-empty "
                              f"string), not {why!r}")
    return dict(value)


def _read_format(cfg: Config, k: ConfigKey, value, where: str) -> str:
    if value not in FORMATS:
        raise ConfigError(f"{where}: `format` must be one of {', '.join(FORMATS)}, not {value!r}")
    return value


# In the order --show-settings shows them.
CONFIG_KEYS: tuple[ConfigKey, ...] = (
    ConfigKey("format", _read_format, f"the report's format: {', '.join(FORMATS)}", lambda r: r.fmt),
    ConfigKey("select", _read_codes, 'rule codes or prefixes to run; "ALL" (the default) for every rule, '
              '"AL900" for unused suppressions', lambda r: list(r.selected) or ["ALL"], hides=True),
    ConfigKey("ignore", _read_codes, "rule codes or prefixes to skip", lambda r: list(r.settings.ignore), hides=True),
    ConfigKey("exclude", _read_exclude, "globs of paths to skip, relative to the project root (or a file name)",
              lambda r: list(r.exclude), hides=True),
    ConfigKey("per-file-ignores", _read_per_file_ignores, "a table of glob = [codes]: those codes skipped there",
              lambda r: {k: list(v) for k, v in r.per_file_ignores.items()}, hides=True),
    ConfigKey("src", _read_src, "the folders analysed when no path is given, inside the project root",
              lambda r: list(r.config.src), hides=True),
    ConfigKey("severity", _read_severity, 'a table of code = "error", "warning" or "info"',
              lambda r: dict(r.severity), hides=True),
    ConfigKey("extra-family-bases", _read_bases, "qualified names of family bases the index cannot see "
              "(reserved: parsed and shown, not used yet)", lambda r: list(r.extra_family_bases)),
    ConfigKey("cache-dir", _read_cache_dir, "a folder inside $XDG_CACHE_HOME/attn-lint for this project's cache",
              lambda r: r.settings.cache_dir),
    ConfigKey("jobs", _read_jobs, "parsing workers; 0: one per core (capped at the machine's cores)",
              lambda r: r.settings.jobs),
    ConfigKey("astroid", _read_bool, "ask astroid about receivers the index cannot type",
              lambda r: r.settings.astroid),
    ConfigKey("server", _read_bool, "false: never use the resident server; true starts one only from a file "
              "named with --config", lambda r: r.server),
    ConfigKey("show-latent", _read_bool, "also report latent drift (low confidence)", lambda r: r.show_latent),
    ConfigKey("fail-on", _read_fail_on, f"the lowest confidence that makes the exit status 1: "
              f"{' or '.join(FAIL_ON)}", lambda r: r.fail_on),
    ConfigKey("dismissed", _read_dismissed, "a table of finding identity = why it was set aside",
              lambda r: dict(r.dismissed), hides=True),
)
_BY_KEY = {k.key: k for k in CONFIG_KEYS}


def _apply_table(cfg: Config, table: dict, where: str) -> None:
    origin = os.path.basename(cfg.path or "pyproject.toml")
    for key, value in table.items():
        k = _BY_KEY.get(key)
        if k is None:
            close = [n for n in _BY_KEY if n.replace("-", "_") == key.replace("-", "_")]
            hint = f"; did you mean `{close[0]}`?" if close else f" (known keys: {', '.join(_BY_KEY)})"
            raise ConfigError(f"{where}: unknown key `{key}`{hint}")
        cfg.sources[key] = origin
        setattr(cfg, k.field, k.read(cfg, k, value, where))


def _strings(value, key: str, where: str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}: `{key}` must be a list of strings, not {value!r}")
    if any("\0" in v for v in value):
        raise ConfigError(f"{where}: `{key}` has an entry with a NUL character")
    return tuple(value)


def _leaves_root(glob: str) -> bool:
    """Whether a configured glob names a place outside the project root (`/etc/*`, `../x/*`)."""
    parts = glob.replace("\\", "/").split("/")
    return glob.startswith(("/", "~")) or os.path.isabs(glob) or ".." in parts


@dataclass(frozen=True)
class Resolved:
    """Everything a run needs: the engine's Settings plus what the CLI applies around the engine
    (never patched: a run that widens makes a new one)."""

    settings: Settings
    config: Config
    paths: list[str]
    fmt: str
    sources: dict[str, str]
    exclude: tuple[str, ...] = ()  # as configured (the Settings hold them rebased to each path too)
    # The resident server (linter/app/server.py): "start" (start one when none runs), "if-running"
    # (use one that runs, the default), "off".
    server: str = "if-running"
    server_asked: bool = False  # `--server` or `server = true`, even where --no-cache turns it off
    show_latent: bool = False  # also report low-confidence findings (latent drift), in their own section
    fail_on: str = "medium"  # the lowest confidence of a finding that makes the exit status 1
    # The suppression rules (AL900, unused suppressions; rules/base.py SuppressionRule) read what
    # the analysis rules' findings left: selecting one by name turns the report on; selected
    # alone, every analysis rule still runs (a suppression is unused only against their
    # findings) and only the suppression rules' findings are reported.
    report_unused: bool = False
    only_unused: bool = False
    unused_ignored: bool = False  # `ignore` covers the suppression rules: no unused-suppression report at all
    selected: tuple[str, ...] = ()  # `select` as given, opt-in rules included (the Settings hold the tree rules')
    notes: list[str] = field(default_factory=list)  # said once on stderr: settings bounded on the way
    args: dict = field(default_factory=dict)  # what resolve() was given: to resolve again with another config
    # Source folders of packages the tree extends as a plug-in (scope.py), analysed as context;
    # outside the repository, they are read as they are for --new-since REF too.
    hosts: tuple[str, ...] = ()

    # What the CLI applies around the engine, as the configuration says it.
    @property
    def per_file_ignores(self) -> dict[str, tuple[str, ...]]:
        return self.config.per_file_ignores

    @property
    def severity(self) -> dict[str, str]:
        return self.config.severity

    @property
    def dismissed(self) -> dict[str, str]:
        return self.config.dismissed

    @property
    def extra_family_bases(self) -> tuple[str, ...]:
        return self.config.extra_family_bases

    def per_file_ignored(self, abs_path: str, code: str) -> bool:
        if not self.per_file_ignores:
            return False
        rel = os.path.relpath(abs_path, self.config.root).replace(os.sep, "/")
        name = os.path.basename(abs_path)
        return any(matches(rel, name, (glob,)) and any(code.startswith(c) for c in codes)
                   for glob, codes in self.per_file_ignores.items())

    def describe(self) -> list[tuple[str, object, str]]:
        """--show-settings's rows: (name, value, where it came from)."""
        src = self.sources
        rows: list[tuple[str, object, str]] = [
            ("config-file", self.config.path or "(none)", ""),
            ("project-root", self.config.root, ""),
            ("paths", self.paths, src.get("paths", "default")),
        ]
        for k in CONFIG_KEYS:
            rows.append((k.key, k.shown(self), src.get(k.key, "default")))
            if k.key == "ignore":
                rows.append(("rules", [r.code for r in self.settings.rules()]
                             + (list(_suppression_codes()) if self.report_unused else []), "resolved"))
        return rows


def resolve(paths: tuple[str, ...], *, select=(), ignore=(), exclude=(), fmt=None, cache_dir=None,
            no_cache=False, jobs=None, no_astroid=False, server=None, config_file=None, isolated=False,
            start: str | None = None, whole_project: bool = False, show_latent: bool = False,
            fail_on: str | None = None, config: Config | None = None) -> Resolved:
    """Merge defaults < pyproject.toml < command line. Raises ConfigError or ValueError.
    `config`: this configuration instead of the one found (a revision's, for --new-since)."""
    args = {k: v for k, v in locals().items() if k != "config"}
    if config is not None:
        cfg = config
    elif isolated:
        cfg = Config(root=os.path.abspath(os.getcwd()))
    elif config_file:
        if not os.path.isfile(config_file):
            raise ConfigError(f"--config: no such file: {config_file}")
        cfg = load_config(os.path.abspath(config_file), os.path.dirname(os.path.abspath(config_file)))
    else:
        first = start or (paths[0] if paths else None)
        root, pyproject = find_project_root(first)
        cfg = load_config(pyproject, root)
    sources = dict(cfg.sources)

    def pick(key, cli_value, cfg_value, given):
        if given:
            sources[key] = "command line"
            return cli_value
        return cfg_value

    sel = pick("select", parse_codes(select, "--select", "command line"), cfg.select, bool(select))
    ign = pick("ignore", parse_codes(ignore, "--ignore", "command line"), cfg.ignore, bool(ignore))
    exc = pick("exclude", tuple(exclude), cfg.exclude, bool(exclude))
    fmt_ = pick("format", fmt, cfg.format or "text", fmt is not None)
    n_jobs = pick("jobs", jobs, cfg.jobs if cfg.jobs is not None else 0, jobs is not None)
    notes: list[str] = []
    cores = os.cpu_count() or 1
    if jobs is None and n_jobs > cores:  # a repository's `jobs = 100000` must not fork that many
        notes.append(f"`jobs = {n_jobs}` in {cfg.sources.get('jobs', 'pyproject.toml')} capped at {cores}, "
                     f"this machine's cores (give --jobs on the command line for more)")
        n_jobs = cores
    use_astroid = pick("astroid", False, cfg.astroid if cfg.astroid is not None else True, no_astroid)
    use_server = pick("server", server, cfg.server, server is not None)
    if use_server is True and server is None and not config_file:
        # A repository's own file must not leave a process running after the run (a pull request
        # can edit it); a server already running for the project is still used.
        notes.append(f"`server = true` in {cfg.sources.get('server', 'pyproject.toml')} does not start the server: "
                     "a repository's configuration never leaves a process running (pass --server, or run "
                     "`attn-lint server start`)")
        use_server = None
    latent = pick("show-latent", True, bool(cfg.show_latent), show_latent)
    gate = pick("fail-on", fail_on, cfg.fail_on or "medium", fail_on is not None)

    if paths:
        run_paths = list(paths)
        sources["paths"] = "command line"
    else:  # as --help says: `src` from the configuration, or the project root (git root or here)
        run_paths = [_rel(os.path.join(cfg.root, s)) for s in cfg.src]
        sources["paths"] = "src" if "src" in cfg.sources else "default (project root)"

    rule_sel = tuple(c for c in sel if not names_opt_in(c))
    unused_ignored = any(code.startswith(c) for code in _suppression_codes() for c in ign)
    if no_cache:
        cache = None
        sources["cache-dir"] = "command line"
    elif cache_dir:
        cache = cache_dir
        sources["cache-dir"] = "command line"
    else:
        cache = cfg.cache_dir or default_cache_dir()
    settings = Settings(select=rule_sel, ignore=tuple(c for c in ign if not names_opt_in(c)),
                        exclude=_rebase_globs(exc, cfg, run_paths), jobs=n_jobs, astroid=use_astroid,
                        link_roots=(cfg.root,), cache_dir=cache,
                        # Every path printed opens from where attn-lint was started (as ruff, mypy
                        # and pylint print them), whatever folder it was found under.
                        display_base=os.getcwd())
    return Resolved(settings=settings, config=cfg, paths=run_paths, fmt=fmt_, args=args,
                    sources=sources, exclude=exc, show_latent=latent, fail_on=gate, selected=sel, notes=notes,
                    report_unused=len(rule_sel) < len(sel) and not unused_ignored,
                    only_unused=bool(sel) and not rule_sel and not unused_ignored, unused_ignored=unused_ignored,
                    server_asked=use_server is True,
                    server="off" if use_server is False or settings.cache_dir is None else
                    "start" if use_server else "if-running")


def _user_cache_folder(value, where: str) -> str:
    """The folder a configuration's `cache-dir` names under the user's cache directory."""
    parts = value.replace("\\", "/").split("/") if isinstance(value, str) and "\0" not in value else []
    if not parts or os.path.isabs(value) or value.startswith("~") or "" in parts[:-1] or ".." in parts \
            or all(p in ("", ".") for p in parts):
        raise ConfigError(f"{where}: `cache-dir` must be a relative folder name such as \"my-project\"; it "
                          f"names a folder inside the user's cache directory ({default_cache_dir()}), never "
                          f"one the repository chooses (use --cache-dir on the command line for any other "
                          f"place), not {value!r}")
    return os.path.join(default_cache_dir(), *(p for p in parts if p not in ("", ".")))


def _rel(path: str) -> str:
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel


def _rebase_globs(globs: tuple[str, ...], cfg: Config, paths: list[str]) -> tuple[str, ...]:
    """The engine matches excludes against paths relative to each argument; the file's globs are
    relative to the project root. Keep each glob and add its form relative to every argument folder
    under the root (`src/legacy/*` also as `legacy/*` when `src/` is the argument)."""
    out = list(globs)
    for p in paths:
        full = os.path.abspath(p)
        if not os.path.isdir(full):
            continue
        rel = os.path.relpath(full, cfg.root).replace(os.sep, "/")
        if rel == "." or rel.startswith(".."):
            continue
        prefix = rel + "/"
        for g in globs:
            if g.startswith(prefix) and g[len(prefix):] not in out:
                out.append(g[len(prefix):])
    return tuple(out)
