"""What a run analyses versus what it reports.

Drift lies between files: the probe in one module, the wrapper in a second, the builder that pairs
them in a third. `attn-lint sglang/srt/layers/attention/` analysed alone sees the wrappers but
neither the probes nor the builders, and says "No findings" about a folder that holds a dozen. So
a run analyses the project a path belongs to (the configured `src` that holds it, or else its
top-level package, as Python's imports see it: namespace folders included) and reports the
findings located in the paths given, or whose evidence cites a line in them.

A plug-in (a package that extends many distinct classes of another installed package, its host)
is analysed with its host's source as context; the host's own findings are not reported. The host
is found as an import finds a package (on the import path, never by running anything), or named
with --host.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass

from .discover import SKIP_DIRS, folder_import_root

# A host is a package the tree extends as a plug-in extends its engine: many distinct classes of
# it, each once or twice, and a good share of the tree's classes. A framework the tree merely
# builds on is extended through a few classes many times (torch: 27 distinct bases under 2,006 of
# sglang's 9,452 classes; vllm-rbln: 66 distinct vLLM bases under 77 of its 197 classes).
HOST_MIN_DISTINCT = 10  # distinct classes of the host the tree derives from
HOST_MIN_SHARE = 0.10  # of the tree's classes that derive from the host
HOST_MIN_SPREAD = 0.30  # distinct bases per deriving class


@dataclass(frozen=True)
class Scope:
    """`analyse`: the folders and files the engine reads; `report`: the paths the report is about
    (None: everything analysed); `context`: the folders added around the paths given."""

    analyse: tuple[str, ...]
    report: tuple[str, ...] | None = None
    context: tuple[str, ...] = ()


@dataclass(frozen=True)
class Host:
    """A package the analysed tree extends as a plug-in extends its engine."""

    name: str  # its top-level import name
    derived: int  # classes of the tree that derive from one of its classes
    distinct: int  # distinct classes of it they derive from


def widened(paths: list[str], src: list[str], root: str) -> Scope:
    """The scope of a run on `paths`: each path's configured `src` entry (absolute folders) where
    one holds it, else its top-level package; never above the project `root` where the path lies
    in it. Paths that are their own top already (a package, a folder of packages) stay as given."""
    cache: dict = {}
    analyse: list[str] = []
    context: list[str] = []
    real_root = os.path.realpath(root)
    for p in paths:
        full = os.path.realpath(p)
        holder = next((s for s in src if _within(full, os.path.realpath(s))), None)
        top = holder if holder is not None else _top_package(full, cache)
        if _within(full, real_root) and not _within(os.path.realpath(top), real_root):
            top = root  # a package reaching above the project: the project is as far as we read
        if os.path.realpath(top) == full:
            analyse.append(p)
            continue
        shown = _shown(top)
        analyse.append(shown)
        context.append(shown)
    analyse = _outermost(analyse)
    if not context or all(os.path.realpath(a) in {os.path.realpath(p) for p in paths} for a in analyse):
        return Scope(tuple(paths))
    return Scope(tuple(analyse), tuple(paths), tuple(c for c in _outermost(context) if c in analyse))


def _top_package(full: str, cache: dict) -> str:
    folder = full if os.path.isdir(full) else os.path.dirname(full)
    root = folder_import_root(folder, cache)
    rel = os.path.relpath(folder, root)
    if rel == "." or rel.startswith(".."):  # no package around it: the path is its own top
        return folder if os.path.basename(full) == "__init__.py" else full
    return os.path.join(root, rel.split(os.sep)[0])


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _shown(path: str) -> str:
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel


def _outermost(paths: list[str]) -> list[str]:
    """The paths, each once, without those lying inside another."""
    out: list[str] = []
    reals = [os.path.realpath(p) for p in paths]
    for i, (p, r) in enumerate(zip(paths, reals)):
        if any(_within(r, o) and (r != o or j < i) for j, o in enumerate(reals) if j != i):
            continue
        out.append(p)
    return out


def hosts(outside: dict, classes: int) -> list[Host]:
    """Each package `outside` (the engine's `outside_bases` statistics: name -> [deriving classes,
    distinct bases]) marks as the tree's host, most extended first."""
    found = [Host(name, n, d) for name, (n, d) in outside.items()
             if d >= HOST_MIN_DISTINCT and classes and n >= HOST_MIN_SHARE * classes and d >= HOST_MIN_SPREAD * n]
    return sorted(found, key=lambda h: (-h.distinct, h.name))


def find_host(name: str, named: tuple[str, ...] = (), near: tuple[str, ...] = ()) -> str | None:
    """The source folder of the top-level package `name`: one of the --host folders given (`named`)
    that is it, else the first on the import path as Python would look (a regular package, or a
    folder of Python files), outside the analysed paths (`near`). Nothing is imported: finders that
    run code (editable installs' hooks) are not asked; --host names what they would find."""
    for given in named:
        full = os.path.abspath(given)
        if os.path.basename(full.rstrip(os.sep)) == name and os.path.isdir(full):
            return full
        inner = os.path.join(full, name)
        if os.path.isdir(inner):
            return inner
    if name in SKIP_DIRS:
        return None
    inside = tuple(os.path.realpath(p) for p in near)
    for entry in sys.path:
        if not entry or not os.path.isdir(entry):
            continue
        candidate = os.path.join(entry, name)
        if not os.path.isdir(candidate):
            continue
        real = os.path.realpath(candidate)
        if not _within(real, os.path.realpath(entry)):
            continue  # a link out of its folder (one a repository on the path planted, say) is no package there
        if any(_within(real, i) or _within(i, real) for i in inside):
            continue
        if os.path.isfile(os.path.join(candidate, "__init__.py")) or _has_python(candidate):
            return candidate
    return None


def _has_python(folder: str) -> bool:
    try:
        return any(e.name.endswith(".py") for e in os.scandir(folder))
    except OSError:
        return False
