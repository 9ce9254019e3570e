"""`--fix` / `--diff` for AL001: add a forwarding method to the wrapper (a libcst codemod).

For a wrapper `W` hiding hook `H`, the new method's signature is what every implementation of `H`
accepts: the leading positional parameters they share (same name, same place), then, as
keyword-only, the other parameters every implementation accepts by keyword. A parameter that every
implementation gives a default keeps it only when the defaults are the same literal; otherwise it
is left out (each implementation then uses its own default). When some implementation requires an
argument the others do not take, no safe signature exists and the finding is not fixed.

The body forwards to each delegate attribute whose implementations define `H`:

    hook = getattr(self.full_attn_backend, "H", None)
    if hook is not None:
        return hook(batch, disable_ragged=disable_ragged)

so the probe keeps its meaning for delegates that lack the hook, and every argument passed binds
in every implementation (AL002 stays quiet). The rest of the file, formatting and comments
included, is untouched. New text is re-parsed with `ast` before anything is written, and files are
replaced atomically.

A file is written only while it still holds what the analysis read (its content digest, checked
when the fix is planned and again right before the write), is not read-only, and keeps its mode and
owner; a symlinked module is written at its real path, and only where that lies inside the project
root or a folder named on the command line (a link a repository planted cannot aim the write at a
file outside it). A file left as it is gets a note per finding, and the other files are still
written.
"""

from __future__ import annotations

import difflib
import os
import stat
from dataclasses import dataclass, field

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from ...rules import RULES_BY_CODE
from ..files.discover import open_source, path_within
from ..findings import Finding
from ..model.forwarder import Unfixable
from ..perfile.cache import content_hash
from ..perfile.deepstack import call_deep
from ..perfile.sources import SourceCache
from ..userfiles import Refused, inside_target, replace_file


@dataclass
class MethodPlan:
    finding: Finding
    class_name: str  # dotted within the module ("Outer.Inner")
    class_line: int
    code: str  # the method's source at indentation 0


@dataclass
class FilePlan:
    path: str  # absolute
    display: str
    old: bytes = b""
    new: bytes | None = None
    methods: list[MethodPlan] = field(default_factory=list)
    skipped: list[tuple[Finding, str]] = field(default_factory=list)
    digest: str | None = None  # content_hash of the bytes the analysis read
    unwritten: str | None = None  # why the file was left as it is, when it was
    refused: bool = False  # left as it is because writing it would reach outside the project


# ------------------------------------------------------------------------------------------------
# Planning
# ------------------------------------------------------------------------------------------------

def plan(result, findings: list[Finding]) -> list[FilePlan]:
    """One FilePlan per file touched by the findings whose rule can fix them (Rule.fixable; needs
    `analyse(..., keep_context=True)`)."""
    plans: dict[str, FilePlan] = {}
    ctx = result.context
    sources = SourceCache()
    for f in findings:
        rule = RULES_BY_CODE.get(f.code)
        if rule is None or not rule.fixable:
            continue
        if ctx is None:
            raise RuntimeError("fixing needs the analysis context (analyse(..., keep_context=True))")
        entry = ctx.index.classes.get(f.class_name)
        if entry is None:
            continue
        path = entry.file.path
        fp = plans.setdefault(path, FilePlan(path, _shown(entry.file), digest=result.digests.get(path)))
        try:
            code = rule.fix_method(ctx, f, sources, sources.indent(path))
        except Unfixable as exc:
            fp.skipped.append((f, str(exc)))
            continue
        except OSError as exc:  # an implementation's file went away after the analysis
            fp.skipped.append((f, f"cannot read {exc.filename or 'a file'}: {exc.strerror or exc}"))
            continue
        fp.methods.append(MethodPlan(f, entry.info.name, entry.info.line, code))
    for fp in plans.values():
        if fp.methods:
            # libcst's visitors recurse once per level of an expression: `1+1+...` of a few hundred
            # terms needs the deep stack the analysis also runs such walks in.
            call_deep(_render, fp, sources)
    return list(plans.values())


def _shown(sf) -> str:
    """The file as seen from the current directory (so that the diff applies with `git apply`)."""
    return path_within(sf.path, os.curdir, sf.path)


class _AddMethods(cst.CSTTransformer):
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, targets: dict[tuple[str, int], list[cst.BaseStatement]]):
        super().__init__()
        self.targets = targets
        self.stack: list[str] = []
        self.done: set[tuple[str, int]] = set()

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        self.stack.append(node.name.value)
        return True

    def leave_ClassDef(self, original: cst.ClassDef, updated: cst.ClassDef) -> cst.ClassDef:
        name = ".".join(self.stack)
        self.stack.pop()
        pos = self.get_metadata(PositionProvider, original)
        # The summary's class line is the `class` keyword's; libcst's start includes decorators.
        keys = [k for k in self.targets if k[0] == name and k not in self.done and
                pos.start.line <= k[1] <= pos.end.line]
        if not keys or not isinstance(updated.body, cst.IndentedBlock):
            return updated
        key = keys[0]
        self.done.add(key)
        new = list(updated.body.body)
        for stmt in self.targets[key]:
            new.append(stmt.with_changes(leading_lines=[cst.EmptyLine(indent=False)]))
        return updated.with_changes(body=updated.body.with_changes(body=new))


def _render(fp: FilePlan, sources: SourceCache) -> None:
    try:
        fp.old = sources.data(fp.path)
    except OSError as exc:
        _leave(fp, f"cannot read the file ({exc.strerror or exc})")
        return
    if content_hash(fp.old) != fp.digest:  # e.g. the hook added by hand meanwhile: never add a second
        _leave(fp, CHANGED)
        return
    try:
        module = sources.module(fp.path)
    except Exception as exc:
        for m in fp.methods:
            fp.skipped.append((m.finding, f"libcst cannot parse the file: {getattr(exc, 'message', exc)}"))
        fp.methods = []
        return
    targets: dict[tuple[str, int], list[cst.BaseStatement]] = {}
    for m in list(fp.methods):
        try:
            stmt = cst.parse_statement(m.code, config=module.config_for_parsing)
        except cst.ParserSyntaxError as exc:
            fp.skipped.append((m.finding, f"generated code does not parse: {exc.message}"))
            fp.methods.remove(m)
            continue
        targets.setdefault((m.class_name, m.class_line), []).append(stmt)
    if not fp.methods:
        return
    transformer = _AddMethods(targets)
    new_module = MetadataWrapper(module, unsafe_skip_copy=True).visit(transformer)
    missing = set(targets) - transformer.done
    if missing:
        kept = []
        for m in fp.methods:
            if (m.class_name, m.class_line) in missing:
                fp.skipped.append((m.finding, "the class body is not an indented block"))
            else:
                kept.append(m)
        fp.methods = kept
    if not fp.methods:
        return
    new = new_module.bytes
    problem = compile_error(new, fp.path)
    if problem:  # never write a file that does not compile
        for m in fp.methods:
            fp.skipped.append((m.finding, f"the fixed file would not compile ({problem}); left unchanged"))
        fp.methods = []
        return
    fp.new = new


def compile_error(data: bytes, path: str) -> str | None:
    """None when `data` compiles as Python (parsed and checked, never run), else the error."""
    try:
        compile(data, path, "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as exc:
        return getattr(exc, "msg", None) or str(exc)
    return None


# ------------------------------------------------------------------------------------------------
# Output
# ------------------------------------------------------------------------------------------------

def notes(plans: list[FilePlan]) -> list[str]:
    out = []
    for fp in plans:
        for f, why in fp.skipped:
            out.append(f"cannot fix {f.code} `{f.class_name.rsplit('.', 1)[-1]}.{f.member}` in {fp.display}: {why}")
    return out


def diff(plans: list[FilePlan]) -> str:
    chunks = []
    for fp in sorted(plans, key=lambda p: p.display):
        if fp.new is None or fp.new == fp.old:
            continue
        old = fp.old.decode("utf-8", errors="replace").splitlines(keepends=True)
        new = fp.new.decode("utf-8", errors="replace").splitlines(keepends=True)
        chunks.append("".join(difflib.unified_diff(old, new, fromfile=git_quoted(f"a/{fp.display}"),
                                                   tofile=git_quoted(f"b/{fp.display}"))))
    return "".join(chunks)


_GIT_ESCAPES = {7: "a", 8: "b", 9: "t", 10: "n", 11: "v", 12: "f", 13: "r", 34: '"', 92: "\\"}


def git_quoted(name: str) -> str:
    """A path as git writes it in a diff header: as it is, or, where it holds a control character,
    a quote, a backslash or anything outside ASCII, in double quotes with C escapes (octal for
    other bytes). `git apply` reads it back, and a terminal shows no escape sequence or
    bidirectional override from it."""
    raw = name.encode("utf-8", "surrogateescape")
    if all(32 <= b < 127 and b not in (34, 92) for b in raw):
        return name
    return '"' + "".join("\\" + _GIT_ESCAPES[b] if b in _GIT_ESCAPES else chr(b) if 32 <= b < 127
                         else f"\\{b:03o}" for b in raw) + '"'


CHANGED = "the file changed since it was analysed; left as it is (run attn-lint again)"


def apply(plans: list[FilePlan], roots: tuple[str, ...]) -> tuple[int, int]:
    """Write the fixed files whose real paths lie inside `roots` (the project root and the paths
    named on the command line); (findings fixed, files written). A file that cannot be written is
    left as it is, with `unwritten` and a note per finding saying why; the others are still written."""
    n_fixed = n_files = 0
    for fp in plans:
        if fp.new is None or fp.new == fp.old:
            continue
        why = _write(fp, roots)
        if why:
            _leave(fp, why)
            continue
        n_fixed += len(fp.methods)
        n_files += 1
    return n_fixed, n_files


def _write(fp: FilePlan, roots: tuple[str, ...]) -> str | None:
    """Write `fp.new` over the file (at its real path); None when written, else why not."""
    try:
        target = inside_target(fp.path, roots, "the file")
    except Refused as exc:
        fp.refused = True
        return f"{exc}; left as it is"
    try:
        with open_source(target) as fh:
            if content_hash(fh.read()) != fp.digest:
                return CHANGED
        st = os.stat(target)
        # From the owner's write bit too: os.access says yes to root for any file.
        if not st.st_mode & stat.S_IWUSR or not os.access(target, os.W_OK):
            return f"the file is read-only (mode {stat.S_IMODE(st.st_mode):04o}); left as it is"
        replace_file(target, fp.new)
    except OSError as exc:
        return f"cannot write the file ({exc.strerror or exc}); left as it is"
    return None


def _leave(fp: FilePlan, why: str) -> None:
    """Leave the file as it is: each of its fixes becomes a note saying why."""
    fp.unwritten = why
    fp.skipped.extend((m.finding, why) for m in fp.methods)
    fp.methods = []
    fp.new = None
