"""The release replay as a measure: what a maintainer running attn-lint on every release would see.

For each release of a package (sglang by default), `attn-lint --format json --show-latent` on its
tree; then, release over release, by finding identity (linter/model/identity.py):

* new: identities of a release's default report absent (at any confidence) from the release before;
* fixed upstream: a new finding that later leaves the report because the code now does what it
  asked: the wrapper gained the member (AL001, AL003), or the calling function still exists but no
  longer makes the rejected call (AL002); the rest of those that leave are "gone" (the class or
  function was removed or renamed, or the analysis stopped pairing it);
* tier flips: an identity present in two consecutive releases whose tier (default report or
  latent) changed, each with its cause: its targets changed, the signals' word on its pairings
  changed, or nothing about its own pairings changed (a flip the issue asks to remove);
* and whether the flip follows from its own evidence, tried rather than read: the later release
  is analysed again with the finding's own files put back as the earlier release has them (the
  files of its class, its targets and latent implementations, and every file its evidence (its
  sites among them) and its signals' reasons cite, in either release). If that restores the earlier tier,
  the flip came from its own pairing's evidence; if not, from a change elsewhere in the tree.

    python bench/replay.py [--package sglang] [--tree-suffix sglang/srt] [--versions 0.5.15 0.5.16 ...]

Releases come from the test cache (tests/precision_labels.py release_tree, which downloads a
missing one). Writes bench/results/replay-<package>.json and prints the table docs/ci.md keeps.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

from precision_labels import cache_root, release_tree  # noqa: E402

DEFAULT = ("low",)


def _version_key(v: str):
    out = []
    for part in v.replace("post", ".").split("."):
        out.append(int(part) if part.isdigit() else -1)
    return out


def cached_versions(package: str) -> list[str]:
    root = cache_root()
    return sorted((p.name[len(package) + 1:] for p in root.glob(f"{package}-*") if (p / ".complete").exists()),
                  key=_version_key)


def report(tree: Path) -> dict:
    proc = subprocess.run([sys.executable, "-m", "attn_lint", "--format", "json", "--show-latent", str(tree)],
                          capture_output=True, text=True, timeout=1800, env={**os.environ, "CI": "1"})
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"attn-lint failed on {tree}: {proc.stderr.strip()[-500:]}")
    doc = json.loads(proc.stdout)
    out = {}
    for f in doc["findings"] + doc.get("latent", []):
        out.setdefault(f["identity"], []).append({
            "code": f["code"], "class": f["class"], "member": f["member"], "path": f["path"],
            "tier": "latent" if f["confidence"] == "low" else "default",
            "caller": (f.get("details") or {}).get("caller"),
            "targets": sorted(t.rsplit(".", 1)[-1] for t in f["targets"]),
            # What the signals said of its pairings, without the places (lines move).
            "reasons": sorted({(r["signal"], r["effect"], re.sub(r"\S+:\d+", "", r["note"]))
                               for r in f["confidence_reasons"]}),
            "files": sorted(_own_files(f, tree))})
    return out


def _own_files(f: dict, tree: Path) -> set[str]:
    """The files a finding's own evidence lies in, relative to the tree: its class's, its targets'
    and latent implementations', its site's, and those its evidence and reasons cite."""
    paths = {f["path"], *(e["path"] for e in f.get("evidence", ())),
             *(r["path"] for r in f.get("confidence_reasons", ()))}
    details = f.get("details") or {}
    if details.get("site"):
        paths.add(details["site"].rsplit(":", 1)[0])
    out = set()
    for p in paths:
        try:
            rel = Path(p).resolve().relative_to(tree.resolve())
        except ValueError:
            continue
        out.add(rel.as_posix())
    prefix = _package_of(tree)
    for qual in [*f["targets"], *filter(None, (details.get("latent_impls") or "").split(","))]:
        module = qual.rsplit(".", 1)[0]
        if not module.startswith(prefix):
            continue
        rel = module[len(prefix):].replace(".", "/")
        for candidate in (f"{rel}.py", f"{rel}/__init__.py"):
            if (tree / candidate).is_file():
                out.add(candidate)
    return out


def _package_of(tree: Path) -> str:
    """The dotted name of the tree's folder below its release folder (`.../sglang/srt` ->
    "sglang.srt."); "" outside a release folder, where module names are not read."""
    try:
        parts = tree.resolve().relative_to(_release_folder(tree)).parts
    except ValueError:
        return ""
    return ".".join(parts) + "." if parts else ""


def _tier(entries: list[dict] | None) -> str | None:
    """An identity's tier in one release: default where any of its entries is reported."""
    if not entries:
        return None
    return "default" if any(e["tier"] == "default" for e in entries) else "latent"


def _release_folder(tree: Path) -> Path:
    """The folder holding the release (its `.complete` marker) that `tree` lies in."""
    p = tree.resolve()
    while not (p / ".complete").exists():
        if p.parent == p:
            raise ValueError(f"{tree} is not inside a release folder (no .complete above it)")
        p = p.parent
    return p


def restores(identity: str, before: list[dict], after: list[dict], tree_before: Path, tree_after: Path) -> bool:
    """Whether analysing the later tree with the finding's own files as the earlier tree has them
    gives the earlier tier back: the flip followed from its own evidence. The later release is
    copied (links as the files they point to), and only files inside the copy are written."""
    files = {rel for e in (*before, *after) for rel in e["files"]}
    release = _release_folder(tree_after)
    with tempfile.TemporaryDirectory(prefix="attn-lint-replay-") as tmp:
        root = Path(tmp).resolve() / release.name
        root.mkdir()
        (root / ".complete").write_text("")  # so that the package path above the tree is the same
        for child in release.iterdir():
            if child.name != ".complete":
                (shutil.copytree(child, root / child.name, symlinks=False) if child.is_dir()
                 else shutil.copyfile(child, root / child.name))
        hybrid = root / tree_after.resolve().relative_to(release)
        for rel in files:
            old, new = tree_before / rel, (hybrid / rel).resolve()
            if not new.is_relative_to(root):
                raise ValueError(f"{rel} leaves the copy of the release")
            if old.is_file():
                new.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(old, new)
            elif new.is_file():
                new.unlink()
        got = report(hybrid).get(identity)
    return _tier(got) == _tier(before)


def _defines(tree: Path, cls_short: str, member: str) -> bool | None:
    """Whether a class of that short name in the tree defines `member` (a method or an attribute
    its body or methods assign) or a `__getattr__`; None when no such class exists."""
    found = None
    for path in tree.rglob("*.py"):
        try:
            text = path.read_text("utf-8", "replace")
        except OSError:
            continue
        if f"class {cls_short}" not in text:
            continue
        try:
            mod = ast.parse(text)
        except (SyntaxError, ValueError):
            continue
        for node in ast.walk(mod):
            if isinstance(node, ast.ClassDef) and node.name == cls_short:
                found = bool(found)
                for n in ast.walk(node):
                    # A `__getattr__` forwards every member the class lacks (AL001's fix too).
                    if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name in (member, "__getattr__"):
                        return True
                    if isinstance(n, ast.Name) and n.id == member and isinstance(n.ctx, ast.Store):
                        return True
                    if isinstance(n, ast.Attribute) and n.attr == member and isinstance(n.ctx, ast.Store):
                        return True
    return found


def _caller_exists(tree: Path, caller: str) -> bool:
    cls, _, fn = caller.rpartition(".")
    needle = f"def {fn}("
    for path in tree.rglob("*.py"):
        try:
            text = path.read_text("utf-8", "replace")
        except OSError:
            continue
        if needle in text and (not cls or f"class {cls}" in text):
            return True
    return False


def why_gone(entry: dict, tree: Path) -> str:
    short = entry["class"].rsplit(".", 1)[-1]
    if entry["code"] in ("AL001", "AL003"):
        got = _defines(tree, short, entry["member"])
        return "fixed upstream" if got else "gone"
    if entry["caller"] and _caller_exists(tree, entry["caller"]):
        return "fixed upstream"
    return "gone"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--package", default="sglang")
    ap.add_argument("--tree-suffix", default="sglang/srt")
    ap.add_argument("--versions", nargs="*", help="releases in order (default: those in the test cache)")
    args = ap.parse_args()
    versions = args.versions or cached_versions(args.package)
    trees = {v: release_tree(args.package, v) / args.tree_suffix for v in versions}
    reports = {}
    for v in versions:
        reports[v] = report(trees[v])
        print(f"{v}: {sum(len(x) for x in reports[v].values())} findings", file=sys.stderr)
    rows, flips, new_all = [], [], []
    for prev, cur in zip(versions, versions[1:]):
        a, b = reports[prev], reports[cur]
        new = [k for k, es in b.items() if k not in a and any(e["tier"] == "default" for e in es)]
        for k in set(a) & set(b):
            ta = {e["tier"] for e in a[k]}
            tb = {e["tier"] for e in b[k]}
            if _tier(a[k]) != _tier(b[k]):
                x, y = a[k][0], b[k][0]
                cause = ("its targets changed" if x["targets"] != y["targets"] else
                         "the signals' word on its pairings changed" if x["reasons"] != y["reasons"] else
                         "nothing about its own pairings changed")
                own = restores(k, a[k], b[k], trees[prev], trees[cur])
                flips.append({"from": prev, "to": cur, "identity": k, "cause": cause,
                              "own_evidence": own,
                              "finding": {key: y[key] for key in ("code", "class", "member", "path")},
                              "tiers": [sorted(ta), sorted(tb)]})
                print(f"flip {prev} -> {cur} {y['class'].rsplit('.', 1)[-1]}.{y['member']}: "
                      f"{'its own evidence' if own else 'a change elsewhere'}", file=sys.stderr)
        new_all.extend((cur, k) for k in new)
        rows.append({"release": cur, "after": prev, "new_default": len(new)})
    # What became of each new finding: the first later release without it tells.
    outcome = {}
    for v, k in new_all:
        later = versions[versions.index(v) + 1:]
        entry = reports[v][k][0]
        for w in later:
            if k not in reports[w]:
                outcome[(v, k)] = (w, why_gone(entry, trees[w]))
                break
        else:
            outcome[(v, k)] = (None, "still reported")
    for row in rows:
        mine = [o for (v, _), o in outcome.items() if v == row["release"]]
        row["fixed_upstream"] = sum(1 for _, why in mine if why == "fixed upstream")
        row["gone"] = sum(1 for _, why in mine if why == "gone")
        row["still_reported"] = sum(1 for _, why in mine if why == "still reported")
    left = sum(r["fixed_upstream"] + r["gone"] for r in rows)
    fixed = sum(r["fixed_upstream"] for r in rows)
    summary = {"releases": versions, "new_default": sum(r["new_default"] for r in rows),
               "left_later": left, "fixed_upstream": fixed,
               "upstream_confirmed_share": round(fixed / left, 3) if left else None,
               "tier_flips": len(flips),
               "tier_flips_by_cause": {c: sum(1 for f in flips if f["cause"] == c)
                                       for c in sorted({f["cause"] for f in flips})},
               # Restoring the finding's own files to the earlier release gives the earlier tier back.
               "tier_flips_from_own_evidence": sum(1 for f in flips if f["own_evidence"]),
               "tier_flips_from_elsewhere": sum(1 for f in flips if not f["own_evidence"])}
    out = HERE / "results" / f"replay-{args.package}.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps({"summary": summary, "rows": rows, "flips": flips,
                               "new": [{"release": v, "identity": k, **reports[v][k][0],
                                        "left_in": outcome[(v, k)][0], "why": outcome[(v, k)][1]}
                                       for v, k in new_all]}, indent=1))
    print("| release | new in the default report | later fixed upstream | later gone otherwise | still reported |")
    print("|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['release']} | {r['new_default']} | {r['fixed_upstream']} | {r['gone']} | {r['still_reported']} |")
    print(f"\n{json.dumps(summary)}")


if __name__ == "__main__":
    main()
