"""Hand triage of real code as data: labels files, finding keys, matching a run to its labels, tallies.

A labels file (`tests/data/labels/<package>-<version>-<tree>.json`, or `<package>-<version>.json`
when the whole package was linted) says which release and folder was linted and, per finding key,
the verdict of a reading of the code: `true` (a real configuration loses behaviour or meets a
TypeError), `false` (no configuration can), `unclear` (possible, but no configuration was found).

A finding's key is `<rule>:<qualified class>:<member>`, with the class as `--format json` prints it
(field `class`): it names the module, so it does not change with how paths are displayed. Two AL002
findings may share one (two call sites of one member); those keys get `@<path>:<line>` of the call
site, the path relative to the folder the labels file names, matched by its tail so that linting a
parent folder keeps the match.

Used by `bench/precision_table.py` (writes the tables of docs/precision.md) and by
`tests/test_precision_sglang.py` (fails when a finding judged true leaves the default report).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

LABELS_DIR = Path(__file__).resolve().parent / "data" / "labels"
VERDICTS = ("true", "unclear", "false")
UNTRIAGED = "untriaged"
LEVELS = ("high", "medium", "low")
DEFAULT_REPORT = ("high", "medium")  # low is latent drift: only with --show-latent


def load(name_or_path: str | Path) -> dict:
    path = Path(name_or_path)
    if path.suffix != ".json":  # a name: `sglang-0.5.23-srt`
        path = LABELS_DIR / f"{name_or_path}.json"
    with open(path, encoding="utf-8") as fh:
        doc = json.load(fh)
    bad = {k: v.get("verdict") for k, v in doc["labels"].items() if v.get("verdict") not in VERDICTS}
    if bad:
        raise ValueError(f"{path}: verdicts must be one of {VERDICTS}: {bad}")
    doc["name"] = path.stem
    return doc


def all_labels() -> list[dict]:
    return [load(p) for p in sorted(LABELS_DIR.glob("*.json"))]


def base_key(finding: dict) -> str:
    return f"{finding['code']}:{finding['class']}:{finding['member']}"


def call_site(finding: dict) -> str:
    return dict(finding.get("details") or {}).get("call") or f"{finding['path']}:{finding['line']}"


def keys(findings: list[dict]) -> list[str]:
    """The key of each finding, in order; AL002 findings sharing a key get their call site."""
    counts = Counter(base_key(f) for f in findings if f["code"] == "AL002")
    return [base_key(f) + (f"@{call_site(f)}" if f["code"] == "AL002" and counts[base_key(f)] > 1 else "")
            for f in findings]


def _same_site(a: str, b: str) -> bool:
    """`x/y.py:12` and `srt/x/y.py:12` name one call site (one display root below the other)."""
    return a == b or a.endswith("/" + b) or b.endswith("/" + a)


def label_of(labels: dict, key: str) -> tuple[str, dict] | None:
    if key in labels:
        return key, labels[key]
    if "@" in key:
        base, site = key.split("@", 1)
        for k, v in labels.items():
            if k.startswith(base + "@") and _same_site(k.split("@", 1)[1], site):
                return k, v
    return None


@dataclass
class Row:
    key: str
    finding: dict | None  # None: labelled, no longer reported at all
    label: dict | None  # None: untriaged

    @property
    def verdict(self) -> str:
        return self.label["verdict"] if self.label else UNTRIAGED

    @property
    def confidence(self) -> str:
        if self.finding is None:
            return "gone"
        return self.finding.get("confidence") or "medium"

    @property
    def in_default_report(self) -> bool:
        return self.confidence in DEFAULT_REPORT

    @property
    def rule(self) -> str:
        return self.key.split(":", 1)[0]


@dataclass
class Match:
    labels: dict
    rows: list[Row] = field(default_factory=list)

    def reported(self) -> list[Row]:
        return [r for r in self.rows if r.finding is not None]

    def default_report(self) -> list[Row]:
        return [r for r in self.rows if r.in_default_report]

    def untriaged(self) -> list[Row]:
        return [r for r in self.rows if r.label is None]

    def gone(self) -> list[Row]:
        return [r for r in self.rows if r.finding is None]

    def lost_true(self) -> list[Row]:
        """Findings judged true that are not in the default report (latent, or not reported at all)."""
        return [r for r in self.rows if r.verdict == "true" and not r.in_default_report]

    def precision(self) -> tuple[int, int]:
        shown = self.default_report()
        return sum(r.verdict == "true" for r in shown), len(shown)

    def recall(self) -> tuple[int, int]:
        true = [r for r in self.rows if r.verdict == "true"]
        return sum(r.in_default_report for r in true), len(true)


def match(labels_doc: dict, findings: list[dict]) -> Match:
    labels = labels_doc["labels"]
    result = Match(labels_doc)
    used = set()
    for key, f in zip(keys(findings), findings):
        hit = label_of(labels, key)
        if hit:
            used.add(hit[0])
            result.rows.append(Row(hit[0], f, hit[1]))
        else:
            result.rows.append(Row(key, f, None))
    result.rows += [Row(k, None, v) for k, v in labels.items() if k not in used]
    return result


def summary_cache():
    """The summaries of real code, kept between test sessions beside the downloads: keyed by the
    files' contents and the per-file pass's own code, so a rule edit keeps them. Only summaries:
    no run's result, stat map or astroid memo is kept or read (keeps_runs=False), so each run
    analyses the tree as a cold one does, without parsing it again."""
    from attn_lint.linter.perfile.cache import Cache

    return Cache(str(cache_root() / "summaries"), keeps_runs=False)


def findings_of(tree: str | Path) -> tuple[list[dict], dict]:
    """Every finding of a fresh in-process run on tree, latent ones too (JSON form), and the stats."""
    from attn_lint.linter.app.engine import Settings, analyse

    cache = summary_cache()
    result = analyse([str(tree)], Settings(cache_dir=cache.dir), cache=cache)
    errors = [e for e in result.errors if e.kind == "internal-error"]
    if errors:
        raise RuntimeError(f"attn-lint reported internal errors on {tree}: {errors[:3]}")
    return [f.to_json() for f in result.findings + list(getattr(result, "latent", []))], result.stats


# -- where the labelled code comes from ------------------------------------------------------------

def cache_root() -> Path:
    root = os.environ.get("ATTN_LINT_TEST_CACHE") or os.path.join(os.path.expanduser("~"), ".cache",
                                                                  "attn-lint-tests")
    return Path(root)


def release_tree(package: str, version: str) -> Path:
    """The folder holding `<package>/` of that release's wheel from PyPI, downloaded and unpacked
    under the test cache on first use. Raises RuntimeError, with pip's reason, when it cannot."""
    top = package.replace("-", "_")
    root = cache_root()
    dest = root / f"{package}-{version}"
    if (dest / ".complete").exists():
        return dest
    wheels = root / "wheels"

    def wheel() -> Path | None:
        hits = sorted(wheels.glob(f"{top}-{version}-*.whl")) if wheels.is_dir() else []
        return hits[0] if hits else None

    if wheel() is None:
        wheels.mkdir(parents=True, exist_ok=True)
        cmd = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:",
               "--platform", "manylinux_2_34_x86_64", "--platform", "manylinux_2_28_x86_64",
               "--python-version", "3.11", f"{package}=={version}",
               "-d", str(wheels)]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise RuntimeError(f"cannot download {package}=={version} from PyPI: {exc}") from exc
        if proc.returncode != 0 or wheel() is None:
            lines = (proc.stderr or proc.stdout).strip().splitlines()
            why = lines[-1] if lines else f"pip exited with {proc.returncode}"
            raise RuntimeError(f"cannot download {package}=={version} from PyPI (registry unreachable?): {why}")
    # Unpack into a temporary sibling, then move into place: an interrupted run leaves no half tree.
    tmp = Path(tempfile.mkdtemp(prefix=f".{package}-{version}-", dir=root))
    try:
        with zipfile.ZipFile(wheel()) as zf:
            zf.extractall(tmp, [m for m in zf.namelist() if m.startswith(top + "/")])
        (tmp / ".complete").write_text(wheel().name + "\n")
        if dest.exists():
            shutil.rmtree(dest)
        os.replace(tmp, dest)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return dest


def labelled_tree(labels_doc: dict) -> Path:
    """The folder a labels file names, inside its release (see release_tree)."""
    return release_tree(labels_doc["package"], labels_doc["version"]) / labels_doc["tree"]
