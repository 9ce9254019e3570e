"""Fixtures that are variations of one tree, built from it.

Most fixtures are the `fixed` serving tree with one bug put back (a method removed, a parameter
dropped, a no-op default left to a wrapper). Each such fixture's `VARIANT.toml` says how it
differs, and the fixture's files are built from that:

    base = "fixed"                       # the fixture it is a variation of
    drop = ["serving/backends/mamba_backend.py"]   # files or folders of the base left out
    own = ["serving/speculative"]        # files or folders written in this fixture, kept as they are

    [[edit]]                             # one replacement in a file of the base
    file = "serving/backends/trtllm_mla_backend.py"
    old = '''..."'''                     # must occur exactly once in that file
    new = '''...'''

The built trees are committed (users run `attn-lint fixtures/`, and `--verify` imports them), so
a shared file is edited once, in the base, and `python tests/fixture_builder.py` writes it into
every variant; tests/test_fixture_builder.py fails while a committed tree differs from what its
VARIANT.toml builds. A fixture without VARIANT.toml (the base, `passed_class_values`) is written
by hand.
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: the tomli the project depends on there
    import tomli as tomllib

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
SPEC = "VARIANT.toml"
KEPT = frozenset({SPEC, "EXPECTED"})  # a fixture's own description, never built


class VariantError(ValueError):
    pass


@dataclass(frozen=True, slots=True)
class Edit:
    file: str
    old: str
    new: str


@dataclass(frozen=True, slots=True)
class Variant:
    name: str
    base: str
    drop: tuple[str, ...] = ()
    own: tuple[str, ...] = ()
    edits: tuple[Edit, ...] = field(default=())

    @classmethod
    def read(cls, root: Path) -> Variant | None:
        path = root / SPEC
        if not path.is_file():
            return None
        try:
            data = tomllib.loads(path.read_text())
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
            raise VariantError(f"{path}: {e}") from None
        unknown = set(data) - {"base", "drop", "own", "edit"}
        if unknown or not isinstance(data.get("base"), str):
            raise VariantError(f"{path}: needs `base` (a fixture's name); unknown keys {sorted(unknown)}")
        for key in ("drop", "own"):
            if not (isinstance(data.get(key, []), list) and all(isinstance(x, str) for x in data.get(key, []))):
                raise VariantError(f"{path}: `{key}` must be a list of paths")
        edits = data.get("edit", [])
        if not (isinstance(edits, list) and all(isinstance(e, dict) and set(e) == {"file", "old", "new"}
                                                and all(isinstance(v, str) for v in e.values()) for e in edits)):
            raise VariantError(f"{path}: each [[edit]] needs `file`, `old` and `new`, all strings, and nothing else")
        return cls(root.name, data["base"], tuple(data.get("drop", ())), tuple(data.get("own", ())),
                   tuple(Edit(e["file"], e["old"], e["new"]) for e in edits))


def tree_files(root: Path) -> dict[str, bytes]:
    """A fixture's source files by path relative to it (its description and bytecode left out)."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and "__pycache__" not in p.parts and p.name not in KEPT and p.suffix != ".pyc"}


def _under(path: str, prefixes: tuple[str, ...]) -> bool:
    return any(path == p or path.startswith(p.rstrip("/") + "/") for p in prefixes)


def build(variant: Variant, fixtures: Path = FIXTURES) -> dict[str, bytes]:
    """The files `variant` is made of: its base's, less `drop`, with the edits made and its own
    files added."""
    base = fixtures / variant.base
    if (base / SPEC).is_file():
        raise VariantError(f"{variant.name}: its base {variant.base} is itself a variant")
    out = {rel: data for rel, data in tree_files(base).items() if not _under(rel, variant.drop)}
    for e in variant.edits:
        if e.file not in out:
            raise VariantError(f"{variant.name}: edits {e.file}, which {variant.base} does not have")
        try:
            text = out[e.file].decode()
        except UnicodeDecodeError:
            raise VariantError(f"{variant.name}: edits {e.file}, which is not UTF-8 text") from None
        if text.count(e.old) != 1:
            raise VariantError(f"{variant.name}: the text an edit of {e.file} replaces occurs "
                               f"{text.count(e.old)} times in {variant.base}, not once")
        out[e.file] = text.replace(e.old, e.new).encode()
    mine = tree_files(fixtures / variant.name)
    for spec in variant.own:
        found = {rel: data for rel, data in mine.items() if _under(rel, (spec,))}
        if not found:
            raise VariantError(f"{variant.name}: its own {spec} is missing")
        out.update(found)
    return out


def variants(fixtures: Path = FIXTURES) -> list[Variant]:
    return [v for d in sorted(fixtures.iterdir()) if d.is_dir() and (v := Variant.read(d)) is not None]


def differences(variant: Variant, fixtures: Path = FIXTURES) -> list[str]:
    """Where the committed fixture differs from what its VARIANT.toml builds."""
    want, have = build(variant, fixtures), tree_files(fixtures / variant.name)
    return ([f"{variant.name}/{rel}: missing" for rel in sorted(want.keys() - have.keys())]
            + [f"{variant.name}/{rel}: not in what it builds" for rel in sorted(have.keys() - want.keys())]
            + [f"{variant.name}/{rel}: differs" for rel in sorted(want.keys() & have.keys()) if want[rel] != have[rel]])


def write(variant: Variant, fixtures: Path = FIXTURES) -> list[str]:
    """Make the committed fixture what its VARIANT.toml builds; the files written. A file is
    overwritten only where git holds it as it is, and never removed."""
    root = fixtures / variant.name
    want, have = build(variant, fixtures), tree_files(root)
    extra = sorted(have.keys() - want.keys())
    if extra:  # never removed here: a file just written by hand would be lost
        raise VariantError(f"{variant.name}: {', '.join(extra)} not in what it builds: list it under "
                           f"`own` in its {SPEC}, or delete it")
    stale = sorted(rel for rel, data in want.items() if have.get(rel) != data)
    unkept = [rel for rel in stale if rel in have and not _held_by_git(root / rel)]
    if unkept:  # a hand edit there would be lost: only text git holds is overwritten
        raise VariantError(f"{variant.name}: {', '.join(unkept)} has changes git does not hold; commit them, "
                           f"or move them into {SPEC} or the base, then run again")
    for rel in stale:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(want[rel])
    return [f"wrote {variant.name}/{rel}" for rel in stale]


def _held_by_git(path: Path) -> bool:
    """Whether git holds the file as it is (tracked, no uncommitted change): overwriting it loses nothing."""
    try:
        proc = subprocess.run(["git", "status", "--porcelain", "--", path.name], cwd=path.parent,
                              capture_output=True, text=True, timeout=30)
        tracked = subprocess.run(["git", "ls-files", "--error-unmatch", "--", path.name], cwd=path.parent,
                                 capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return False
    return proc.returncode == 0 and not proc.stdout.strip() and tracked.returncode == 0


def main() -> int:
    try:
        for v in variants():
            for line in write(v):
                print(line)
    except VariantError as e:
        print(f"fixture_builder: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
