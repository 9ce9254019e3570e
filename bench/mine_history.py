"""Mine a package's release history for drift fixes: candidates for tests/data/history_corpus*.json.

For each release (the unpacked wheels under the test cache, ~/.cache/attn-lint-tests/sglang-<ver>/,
downloaded on demand with --download), attn-lint's own model is run on `sglang/srt` and a snapshot
of what matters for drift is kept (one JSON file per release, keyed by the tool's version, so that
re-mining reads snapshots instead of analysing again). Another package is mined the same way with
`--package PKG` (the tree is then the wheel's whole import folder, `--tree` to change it): its
releases are unpacked, only their `.py`/`.pyi` sources, under ~/.cache/attn-lint-tests/history-PKG/
PKG-<ver>/ (`--download index` fetches every final release PyPI lists between --from and --to,
wheels only: an sdist's metadata step would run the package's code), and the wheel is deleted
after unpacking. SGLang's behaviour and output are unchanged by these options.

- every wrapper the family model finds: its delegates, the implementations they can hold (with and
  without other wrappers), its member table, the calls it forwards through its delegates;
- every class of a family that holds a wrapper: its own methods' signatures and whether each is a
  no-op or a `raise NotImplementedError` placeholder;
- every class that forwards a method or property of its own name to a `self` attribute (whether
  or not the model takes it for a wrapper: the net is wider than the model, so that the corpus is
  not made only of what the model already sees);
- the probe sites, the optional and forwarding call sites with their shapes and every in-tree
  signature of the members they call, and every finding with its confidence.

Then each pair of consecutive releases (PEP 440 order) is compared and candidates are written:

  AL001-fix      a wrapper gained a member that an implementation of its delegates already had
  AL003-fix      a wrapper gained an override of an inherited base no-op that a delegate overrides
  stub-fix       the same, for an inherited `raise NotImplementedError` placeholder
  AL002-fix      a call the wrapper forwards to a delegate could not bind some implementation's
                 signature, and in the next release it can (the call or the signature changed)
  widened        a family member's override of a method gained a parameter its base already had
                 (an override dropping a parameter: callers through the base fail), or, for a
                 member its bases do not declare (an optional hook), one a sibling took
  forward-added  any class gained a method or property forwarding that name to a `self`
                 attribute (the wider net for AL001, wrapper or not)
  override-added any class overrode an inherited placeholder (no-op or NotImplementedError) with
                 such a forward (the wider net for AL003)
  forward-override (wide snapshots: any package but sglang by default) any class overrode a member
                 it inherited from an in-tree base (not a placeholder) with such a forward
  AL002-wide     an optional or forwarding call that some in-tree method of that name (by name
                 only) could not bind, and that binds all of them in the next release
  finding-gone   a finding of release N is gone in N+1 (with whether the class and file remain)

Candidates are material to read, not findings: docs/history-corpus.md says how they were judged;
the judged ones are tests/data/history_corpus.json (kept) and history_corpus_rejected.json.

    python bench/mine_history.py                       # every cached release, candidates to stdout summary
    python bench/mine_history.py --out /tmp/cand.json  # and every candidate as JSON
    python bench/mine_history.py --from 0.5.0 --to 0.5.23 --jobs 2
    python bench/mine_history.py --package lmdeploy --from 0.4.0 --download index --out /tmp/lmd.json
    python bench/mine_history.py --package diffusers --from 0.25.0 --to 0.42.1 --out /tmp/diffusers.json
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

from packaging.version import InvalidVersion, Version

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))  # precision_labels.release_tree: downloads and unpacks a wheel

from attn_lint.linter.app.engine import Settings, analyse  # noqa: E402
from attn_lint.linter.model.facts import mentions_self_attr  # noqa: E402
from attn_lint.linter.perfile.cache import TOOL_KEY  # noqa: E402
from attn_lint.linter.perfile.signature import CallShape, bind_error  # noqa: E402
from attn_lint.linter.perfile.summary import Param, member_target  # noqa: E402

SNAP_VERSION = 5
HISTORY = Path(os.environ.get("ATTN_LINT_HISTORY_CACHE") or Path.home() / ".cache" / "attn-lint-history")
TREE = "sglang/srt"
PACKAGE = "sglang"


def test_cache() -> Path:
    from precision_labels import cache_root
    return cache_root()


def default_tree(package: str) -> str:
    """The folder analysed inside a release: SGLang's runtime, else the wheel's import folder."""
    return TREE if package == PACKAGE else package.replace("-", "_")


def releases_root(package: str = PACKAGE) -> Path:
    """Where a package's releases are unpacked: SGLang's beside the other tests' downloads (as
    before), any other package's in a folder of its own, history-<package>/<package>-<version>/."""
    return test_cache() if package == PACKAGE else test_cache() / f"history-{package}"


def releases(root: Path, lo: str | None = None, hi: str | None = None, package: str = PACKAGE,
             tree: str | None = None) -> list[str]:
    """The package's releases unpacked under root (default: sglang under the test cache), in PEP 440 order."""
    tree = tree or default_tree(package)
    found = []
    for d in root.glob(f"{package}-*"):
        ver = d.name[len(package) + 1:]
        try:
            v = Version(ver)
        except InvalidVersion:
            continue
        if (d / tree).is_dir() and (lo is None or v >= Version(lo)) and (hi is None or v <= Version(hi)):
            found.append(ver)
    return sorted(found, key=Version)


# -- fetching releases of another package ------------------------------------------------------

# Wheels only, for CPython 3.11 on x86-64 Linux (older manylinux tags first: pip does not widen a
# `manylinux_2_28` platform to the 2014 wheels that older releases ship) or pure Python. No sdist:
# `pip download` of an sdist prepares its metadata, which runs the package's build code.
PLATFORMS = ("manylinux2014_x86_64", "manylinux_2_28_x86_64", "manylinux_2_31_x86_64", "manylinux_2_34_x86_64",
             "manylinux_2_35_x86_64")


def index_versions(package: str, lo: str | None = None, hi: str | None = None) -> list[str]:
    """Every final release PyPI's index lists for package (`pip index versions`), within [lo, hi]."""
    proc = subprocess.run([sys.executable, "-m", "pip", "index", "versions", package],
                          capture_output=True, text=True, timeout=300)
    line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("Available versions:")), None)
    if proc.returncode != 0 or line is None:
        why = (proc.stderr or proc.stdout).strip().splitlines()
        raise RuntimeError(f"cannot list {package}'s releases on PyPI: {why[-1] if why else proc.returncode}")
    out = []
    for text in line.split(":", 1)[1].split(","):
        try:
            v = Version(text.strip())
        except InvalidVersion:
            continue
        if not v.is_prerelease and not v.is_devrelease and (lo is None or v >= Version(lo)) \
                and (hi is None or v <= Version(hi)):
            out.append(str(text.strip()))
    return sorted(out, key=Version)


def fetch_release(package: str, version: str, root: Path | None = None) -> Path:
    """The folder holding `<import folder>/` of that release (its .py and .pyi files only),
    downloaded from PyPI and unpacked under root (releases_root(package)) on first use; the wheel
    is deleted once unpacked. Raises RuntimeError, with pip's reason, when it cannot."""
    top = package.replace("-", "_")
    root = root or releases_root(package)
    dest = root / f"{package}-{version}"
    if (dest / ".complete").exists():
        return dest
    root.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{package}-{version}-", dir=root))
    try:
        wheels = tmp / "wheel"
        cmd = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:",
               *(arg for p in PLATFORMS for arg in ("--platform", p)), "--python-version", "3.11",
               f"{package}=={version}", "-d", str(wheels)]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise RuntimeError(f"cannot download {package}=={version} from PyPI: {exc}") from exc
        found = sorted(wheels.glob("*.whl")) if wheels.is_dir() else []
        if proc.returncode != 0 or not found:
            lines = (proc.stderr or proc.stdout).strip().splitlines()
            why = lines[-1] if lines else f"pip exited with {proc.returncode}"
            raise RuntimeError(f"cannot download {package}=={version} from PyPI (registry unreachable?): {why}")
        unpacked = tmp / "tree"
        unpacked.mkdir()
        with zipfile.ZipFile(found[0]) as zf:
            names = [m for m in zf.namelist() if m.startswith(top + "/") and m.endswith((".py", ".pyi"))
                     and ".." not in Path(m).parts]
            zf.extractall(unpacked, names)
        (unpacked / ".complete").write_text(found[0].name + "\n")
        shutil.rmtree(wheels)
        if dest.exists():
            shutil.rmtree(dest)
        os.replace(unpacked, dest)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return dest


# -- one release's snapshot --------------------------------------------------------------------

def _params(fn) -> list:
    return [[p.name, p.kind, p.has_default] for p in fn.params]


def _method_entry(fn) -> dict:
    return {"params": _params(fn), "noop": fn.noop, "stub": fn.unimplemented, "kind": fn.kind, "line": fn.line}


def snapshot_path(version: str, package: str = PACKAGE, tree: str | None = None) -> Path:
    slug = "" if tree in (None, default_tree(package)) else "." + tree.replace("/", "_")
    return HISTORY / "snapshots" / f"{package}-{version}{slug}.v{SNAP_VERSION}.json.gz"


def snapshot(version: str, cache_dir: Path, jobs: int, refresh: bool = False, package: str = PACKAGE,
             tree_path: str | None = None, wide: bool | None = None) -> dict:
    """The release's snapshot, from the history cache when it was made by this tool version.
    `wide` (the default for any package but sglang) records every class of the tree in `classes`,
    not only those of a family that holds a wrapper: the `widened`, `forward-added` and
    `override-added` kinds then see classes the family model does not (a tree where it finds few
    wrappers must not yield a corpus made only of what it already sees)."""
    wide = package != PACKAGE if wide is None else wide
    path = snapshot_path(version, package, tree_path)
    if wide and package == PACKAGE:
        path = path.with_name(path.name.replace(".json.gz", ".wide.json.gz"))
    if path.exists() and not refresh:
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            snap = json.load(fh)
        if snap.get("tool") == TOOL_KEY and snap.get("wide", False) == wide:
            return snap
    rel = tree_path or default_tree(package)
    if package == PACKAGE:
        tree = test_cache() / f"sglang-{version}" / rel
        if not tree.is_dir():
            from precision_labels import release_tree
            tree = release_tree("sglang", version) / rel
    else:
        tree = fetch_release(package, version) / rel
    start = time.perf_counter()
    result = analyse([str(tree)], Settings(cache_dir=str(cache_dir), jobs=jobs), keep_context=True)
    snap = _snapshot_of(result, wide)
    if wide:
        snap["wide"] = True
    snap.update(version=version, tool=TOOL_KEY, seconds=round(time.perf_counter() - start, 2))
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    with gzip.open(tmp, "wt", encoding="utf-8") as fh:
        json.dump(snap, fh, separators=(",", ":"), sort_keys=True)
    os.replace(tmp, path)
    return snap


def _snapshot_of(result, wide: bool = False) -> dict:
    ctx = result.context
    index, model = ctx.index, ctx.model
    digests = {f.display: result.digests.get(f.path) for f in result.files}

    def lookup_table(qual: str) -> dict:
        class_level, instance_level = index.member_table(qual)
        table = {name: list(hit) for name, hit in instance_level.items()}
        table.update({name: list(hit) for name, hit in class_level.items()})
        return table

    wrappers: dict[str, dict] = {}
    families: set[frozenset] = set()
    for wq, w in model.wrappers.items():
        entry = index.classes[wq]
        families.add(model.family_members.get(wq, frozenset()))
        delegate_types = w.delegate_types()
        calls = []
        for c in index.mro(wq):
            ce = index.classes[c]
            for fn in ce.info.methods.values():
                if not fn.params:
                    continue
                for call in fn.calls:
                    target = member_target(fn, call.func)
                    attr = mentions_self_attr(target[0], fn, fn.params[0].name, w.attrs) if target else None
                    if attr:
                        calls.append({"owner": c, "method": fn.name, "member": target[1], "attr": attr,
                                      "how": target[2], "line": call.line, "n": call.n_positional,
                                      "kw": list(call.keywords), "star": call.star, "dstar": call.double_star})
        wrappers[wq] = {
            "path": entry.file.display, "line": entry.info.line, "mro": index.mro(wq),
            "getattr": index.has_getattr_hook(wq), "opaque": bool(index.opaque_bases(wq)),
            "delegates": {d.attr: sorted(d.types) for d in w.delegates},
            "impls": model.implementations(delegate_types, exclude=wq, nested=False),
            "impls_all": model.implementations(delegate_types, exclude=wq, leaves_only=False),
            "members": lookup_table(wq), "forwarded": sorted(w.forwarded), "calls": calls,
        }
    family_roots = frozenset().union(*families) if families else frozenset()
    classes: dict[str, dict] = {}
    for qual in (index.classes if wide else model.family_members):
        if not wide and not model.family_members[qual] & family_roots:
            continue
        entry = index.classes[qual]
        classes[qual] = {
            "path": entry.file.display, "line": entry.info.line, "mro": index.mro(qual),
            "methods": {name: _method_entry(fn) for name, fn in entry.info.methods.items()},
            "members": lookup_table(qual),
        }
    # The wider net: any class (in a family or not) with a method forwarding its own name to an
    # attribute of self (`def h(self, *a): return self.inner.h(*a)`).
    forwarders: dict[str, dict] = {}
    for qual, entry in index.classes.items():
        own = {}
        for name, fn in entry.info.methods.items():
            if not fn.params or name.startswith("__"):
                continue
            for call in fn.calls:
                target = member_target(fn, call.func)
                if target and target[1] == name:
                    attr = mentions_self_attr(target[0], fn, fn.params[0].name, None)
                    if attr:
                        own[name] = attr
                        break
            else:
                # or returns that attribute's member of the same name (a forwarding property)
                for value in fn.return_values:
                    if value and value[0] == "attr" and value[2] == name:
                        attr = mentions_self_attr(value[1], fn, fn.params[0].name, None)
                        if attr:
                            own[name] = attr
                            break
        if own:
            forwarders[qual] = {"path": entry.file.display, "line": entry.info.line, "forwards": own,
                                "members": sorted(lookup_table(qual))}
    probe_sites: dict[str, list] = {}
    for member, entries in ctx.probes.items():
        probe_sites[member] = sorted({(site.path, probe.line, ref_text(probe.receiver), probe.kind, site.where)
                                      for site, probe in entries})
    # The wide net for AL002: calls that treat a member as optional (through getattr, guarded by a
    # probe, on `self` for a member the class does not declare) and calls forwarding a method of the
    # same name through a `self` attribute, each with its shape; and every in-tree signature of
    # those members, by name (no types: the candidates are read, not trusted).
    optional_calls = []
    for site, call, (_, member, how) in ctx.optional_candidates:
        optional_calls.append([site.path, site.where, member, how, call.line, call.n_positional,
                               list(call.keywords), call.star, call.double_star])
    for entries in ctx.self_attr_calls.values():
        for site, call, (_, member, how) in entries:
            if member == site.fn.name:
                optional_calls.append([site.path, site.where, member, how, call.line, call.n_positional,
                                       list(call.keywords), call.star, call.double_star])
    wanted = {c[2] for c in optional_calls}
    signatures: dict[str, dict[str, dict]] = {}
    for qual, entry in index.classes.items():
        for name in wanted & entry.info.methods.keys():
            signatures.setdefault(name, {})[qual] = _method_entry(entry.info.methods[name])
    findings = []
    for f in result.findings:
        findings.append({"code": f.code, "class": f.class_name, "member": f.member, "path": f.path,
                         "line": f.line, "confidence": f.confidence, "targets": list(f.targets),
                         "call": dict(f.details).get("call")})
    return {"snap_version": SNAP_VERSION, "digests": digests, "wrappers": wrappers, "classes": classes,
            "forwarders": forwarders, "probed": sorted(ctx.probes), "probe_sites": probe_sites,
            "called": sorted(ctx.member_calls), "optional_calls": optional_calls, "signatures": signatures,
            "findings": findings, "stats": {k: v for k, v in result.stats.items() if k != "phases"}}


def ref_text(ref, depth: int = 0) -> str:
    """A receiver ref written back as (approximate) source, for reading candidates."""
    if not isinstance(ref, tuple) or not ref or depth > 8:
        return "?"
    kind = ref[0]
    if kind == "name":
        return ref[1]
    if kind == "attr":
        return f"{ref_text(ref[1], depth + 1)}.{ref[2]}"
    if kind == "call":
        return f"{ref_text(ref[1], depth + 1)}()"
    if kind == "sub":
        return f"{ref_text(ref[1], depth + 1)}[]"
    if kind == "iter":
        return f"<item of {ref_text(ref[1], depth + 1)}>"
    if kind == "getattr":
        return f"getattr({ref_text(ref[1], depth + 1)}, {ref[2]!r})"
    if kind in ("seq", "union"):
        return "(" + " | ".join(ref_text(r, depth + 1) for r in ref[1]) + ")"
    return kind


# -- comparing two releases --------------------------------------------------------------------

def _owner(snap: dict, qual: str, member: str) -> list | None:
    for table in (snap["wrappers"].get(qual, {}).get("members"), snap["classes"].get(qual, {}).get("members")):
        if table is not None:
            return table.get(member)
    return None


def _method(snap: dict, qual: str, member: str) -> dict | None:
    hit = _owner(snap, qual, member)
    if not hit or hit[1] != "method":
        return None
    return snap["classes"].get(hit[0], {}).get("methods", {}).get(member)


def _bind(method: dict, call: dict, name: str) -> str | None:
    params = tuple(Param(n, k, d) for n, k, d in method["params"])
    implicit = 1
    if method["kind"] != "staticmethod" and params and params[0].kind in (0, 1):
        params = params[1:]
    elif method["kind"] == "staticmethod":
        implicit = 0
    return bind_error(params, CallShape(call["n"], tuple(call["kw"]), call["star"], call["dstar"]), name, implicit)


def _accepts(method: dict) -> set[str]:
    return {p[0] for p in method["params"][1:] if p[1] in (0, 1, 3)}


def _open(method: dict) -> bool:
    return any(p[1] in (2, 4) for p in method["params"])


def compare(a: dict, b: dict) -> list[dict]:
    """Candidates for drift fixed between release a and the next release b."""
    out: list[dict] = []
    va, vb = a["version"], b["version"]

    def add(kind: str, cls: str, member: str, why: str, **extra) -> None:
        path = (a["wrappers"].get(cls) or a["classes"].get(cls) or a["forwarders"].get(cls) or {}).get("path")
        out.append({"kind": kind, "before": va, "after": vb, "class": cls, "member": member, "file": path,
                    "file_changed": bool(path) and a["digests"].get(path) != b["digests"].get(path),
                    "why": why, "probe_sites": a.get("probe_sites", {}).get(member, [])[:12], **extra})

    seen: set[tuple[str, str, str]] = set()
    for wq, w in a["wrappers"].items():
        after = b["wrappers"].get(wq)
        after_members = after["members"] if after else b["classes"].get(wq, {}).get("members")
        if after_members is None:
            continue  # the class is gone (moved or removed): not a fix
        impls = w["impls_all"]
        for member in sorted(set(after_members) - set(w["members"])):
            if member.startswith("__"):
                continue
            holders = [i for i in impls if _owner(a, i, member)]
            gained_from = after_members[member][0]
            if holders:
                seen.add(("gain", wq, member))
                add("AL001-fix", wq, member, f"gained `{member}`, which {', '.join(short(h) for h in holders[:3])} had",
                    holders=holders, probed=member in a["probed"], called=member in a["called"],
                    getattr=w["getattr"], wrapper_in_after=bool(after), after_owner=gained_from,
                    own_change=gained_from == wq)
        for member, hit in sorted(w["members"].items()):
            owner, kind = hit
            if member.startswith("__") or owner == wq or kind != "method":
                continue
            new = after_members.get(member)
            if not new or new[0] == owner:
                continue
            base_fn = a["classes"].get(owner, {}).get("methods", {}).get(member)
            if base_fn is None or not (base_fn["noop"] or base_fn["stub"]):
                continue
            after_fn = b["classes"].get(new[0], {}).get("methods", {}).get(member)
            if after_fn is not None and (after_fn["noop"] or after_fn["stub"]):
                continue  # replaced by another placeholder: nothing starts working
            overriders = []
            for impl in impls:
                found = _owner(a, impl, member)
                fn = _method(a, impl, member)
                if found and found[0] != owner and fn and not fn["noop"] and not fn["stub"]:
                    overriders.append(found[0])
            if overriders:
                seen.add(("gain", wq, member))
                add("AL003-fix" if base_fn["noop"] else "stub-fix", wq, member,
                    f"overrode `{short(owner)}.{member}` ({'no-op' if base_fn['noop'] else 'NotImplementedError'}),"
                    f" which {', '.join(short(o) for o in sorted(set(overriders))[:3])} override",
                    base=owner, overriders=sorted(set(overriders)), probed=member in a["probed"],
                    called=member in a["called"])
        # Forwarded calls that some implementation could not bind, and can in the next release.
        for call in w["calls"]:
            rejecting = []
            for impl in w["impls_all"]:
                fn = _method(a, impl, call["member"])
                if fn and fn["kind"] != "property":
                    err = _bind(fn, call, f"{short(impl)}.{call['member']}")
                    if err:
                        rejecting.append((impl, err))
            if not rejecting or not after:
                continue
            still = []
            for c2 in after["calls"]:
                if c2["member"] != call["member"] or c2["method"] != call["method"]:
                    continue
                for impl in after["impls_all"]:
                    fn = _method(b, impl, c2["member"])
                    if fn and fn["kind"] != "property" and _bind(fn, c2, impl):
                        still.append(impl)
            if not still and ("AL002", wq, call["member"]) not in seen:
                seen.add(("AL002", wq, call["member"]))
                add("AL002-fix", wq, call["member"],
                    f"`{call['method']}` forwarded `{call['member']}` at line {call['line']}: {rejecting[0][1]}",
                    rejecting=[r[0] for r in rejecting], call=call)
    # An override gained a parameter that a sibling or its base already took.
    for qual, c in a["classes"].items():
        c2 = b["classes"].get(qual)
        if c2 is None:
            continue
        for name, fn in c["methods"].items():
            fn2 = c2["methods"].get(name)
            if name.startswith("__") or fn2 is None or _open(fn):
                continue
            gained = _accepts(fn2) - _accepts(fn)
            if not gained:
                continue
            others = set()
            for base in c["mro"][1:]:
                bf = a["classes"].get(base, {}).get("methods", {}).get(name)
                if bf:
                    others |= _accepts(bf)
            known = sorted(gained & others)
            if known:
                add("widened", qual, name, f"`{short(qual)}.{name}` gained {', '.join(known)}, which a base took",
                    gained=known, probed=name in a["probed"], called=name in a["called"])
                continue
            # A member its bases do not declare (an optional hook): did a sibling take the parameter?
            siblings = set()
            for other, oc in a["classes"].items():
                of = oc["methods"].get(name)
                if other != qual and of and set(oc["mro"][1:]) & set(c["mro"][1:]):
                    siblings |= _accepts(of)
            known = sorted(gained & siblings)
            if known:
                add("widened", qual, name, f"`{short(qual)}.{name}` gained {', '.join(known)}, which a sibling took",
                    gained=known, probed=name in a["probed"], called=name in a["called"])
    # The wider net: a class gained a method forwarding its own name to an attribute of self.
    for qual, f2 in b["forwarders"].items():
        f1 = a["forwarders"].get(qual)
        before_members = set(f1["members"]) if f1 else (
            set((a["wrappers"].get(qual) or a["classes"].get(qual) or {}).get("members", {})) or None)
        if before_members is None:
            continue  # a new class, or one we knew nothing of: nothing to compare
        for member, attr in f2["forwards"].items():
            if ("gain", qual, member) in seen:
                continue
            if member in before_members:
                # Already there: inherited from a placeholder (no-op or NotImplementedError) before?
                hit = (a["classes"].get(qual) or {}).get("members", {}).get(member)
                base_fn = a["classes"].get(hit[0], {}).get("methods", {}).get(member) if hit else None
                if hit and hit[0] != qual and base_fn and (base_fn["noop"] or base_fn["stub"]):
                    add("override-added", qual, member,
                        f"overrode inherited `{short(hit[0])}.{member}` "
                        f"({'no-op' if base_fn['noop'] else 'NotImplementedError'}) forwarding to `self.{attr}`",
                        attr=attr, base=hit[0], probed=member in a["probed"], called=member in a["called"])
                elif a.get("wide") and hit and hit[0] != qual:
                    # (wide snapshots only) inherited from an in-tree base that does something of its
                    # own (not a placeholder), now answered by the held object: the base's member may
                    # have run where the delegate's should have (e.g. a setting that never reached it)
                    add("forward-override", qual, member,
                        f"overrode inherited `{short(hit[0])}.{member}` ({hit[1]}) forwarding to `self.{attr}`",
                        attr=attr, base=hit[0], probed=member in a["probed"], called=member in a["called"])
                continue
            add("forward-added", qual, member, f"gained `{member}` forwarding to `self.{attr}`",
                attr=attr, probed=member in a["probed"], called=member in a["called"])
    # The wide AL002 net: an optional or forwarding call that some in-tree method of that name
    # could not bind, and that binds every one of them in the next release.
    def shape(c):
        return {"n": c[5], "kw": c[6], "star": c[7], "dstar": c[8]}

    later: dict[tuple, list] = {}
    for c in b.get("optional_calls", ()):
        later.setdefault((c[1], c[2]), []).append(c)
    done: set[tuple] = set()
    for c in a.get("optional_calls", ()):
        key = (c[1], c[2])
        if key in done or key not in later:
            continue
        rejecting = [q for q, fn in a.get("signatures", {}).get(c[2], {}).items()
                     if fn["kind"] != "property" and _bind(fn, shape(c), q)]
        if not rejecting:
            continue
        still = [q for c2 in later[key] for q in rejecting
                 if (fn := b.get("signatures", {}).get(c[2], {}).get(q)) and fn["kind"] != "property"
                 and _bind(fn, shape(c2), q)]
        if still:
            continue
        done.add(key)
        out.append({"kind": "AL002-wide", "before": va, "after": vb, "class": c[1], "member": c[2], "file": c[0],
                    "file_changed": a["digests"].get(c[0]) != b["digests"].get(c[0]),
                    "why": f"`{c[1]}` calls `{c[2]}` ({c[3]}) at {c[0]}:{c[4]}; rejected by "
                           f"{', '.join(short(q) for q in rejecting[:4])}",
                    "rejecting": rejecting, "probe_sites": []})
    # Findings that went away while their class stayed and its file changed.
    after_keys = {(f["code"], f["class"], f["member"]) for f in b["findings"]}
    for f in a["findings"]:
        key = (f["code"], f["class"], f["member"])
        if key in after_keys:
            continue
        exists = f["class"] in b["wrappers"] or f["class"] in b["classes"] or f["class"] in b["forwarders"] \
            or any(f["class"] == g["class"] for g in b["findings"])
        changed = a["digests"].get(f["path"]) != b["digests"].get(f["path"])
        out.append({"kind": "finding-gone", "before": va, "after": vb, "class": f["class"], "member": f["member"],
                    "file": f["path"], "file_changed": changed, "rule": f["code"], "confidence": f["confidence"],
                    "class_in_after": exists, "why": f"{f['code']} at {f['path']}:{f['line']} gone"})
    return out


def short(qual: str) -> str:
    return qual.rsplit(".", 1)[-1]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--from", dest="lo")
    ap.add_argument("--to", dest="hi")
    ap.add_argument("--download", nargs="*", default=[],
                    help="versions to fetch from PyPI first; `index`: every final release PyPI lists "
                         "within --from/--to")
    ap.add_argument("--package", default=PACKAGE, help="the package whose history is mined (default sglang)")
    ap.add_argument("--tree", help="the folder analysed inside a release (default: sglang/srt for sglang, "
                                   "else the package's import folder)")
    ap.add_argument("--wide", action=argparse.BooleanOptionalAction, default=None,
                    help="record every class, not only families holding a wrapper (default: on for any "
                         "package but sglang)")
    ap.add_argument("--jobs", type=int, default=0)
    ap.add_argument("--refresh", action="store_true", help="re-analyse even when a snapshot exists")
    ap.add_argument("--out", help="write every candidate here (JSON)")
    args = ap.parse_args(argv)
    tree = args.tree or default_tree(args.package)
    wanted = [v for v in args.download if v != "index"]
    if "index" in args.download:
        wanted += index_versions(args.package, args.lo, args.hi)
    for v in wanted:
        try:
            if args.package == PACKAGE:
                from precision_labels import release_tree
                release_tree("sglang", v)
            else:
                fetch_release(args.package, v)
        except RuntimeError as exc:  # one release the index cannot give us: mine the others
            print(f"{v}: skipped: {exc}", file=sys.stderr)
    versions = releases(releases_root(args.package), args.lo, args.hi, args.package, tree)
    cache_dir = HISTORY / "lint-cache"
    snaps = []
    prev = None
    candidates: list[dict] = []
    for v in versions:
        t = time.perf_counter()
        snap = snapshot(v, cache_dir, args.jobs, args.refresh, args.package, args.tree, args.wide)
        print(f"{v}: {len(snap['wrappers'])} wrappers, {len(snap['findings'])} findings "
              f"({time.perf_counter() - t:.1f}s)", file=sys.stderr)
        if prev is not None:
            candidates.extend(compare(prev, snap))
        prev = snap
        snaps.append(v)
    kinds: dict[str, int] = {}
    for c in candidates:
        kinds[c["kind"]] = kinds.get(c["kind"], 0) + 1
    print(f"{len(snaps)} releases, {len(candidates)} candidates: {kinds}")
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            json.dump(candidates, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
