"""Cache entries as plain data: what the engine keeps between runs, and the checks that rebuild it.

A cache folder is only a file system folder: whatever is in it may be damaged or planted. So
entries hold only tuples, dicts, strings, numbers and booleans (stored with `marshal`, sealed
by cache.py), and each decoder checks every value's type and shape before it rebuilds the
engine's objects. A decoder raises on anything unexpected; the cache turns that into a miss.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..files.read_set import ReadSet
from ..findings import LEVELS, Evidence, FileError, Finding, Reason
from .guards import Guard
from .summary import CallSite, ClassAttr, ClassInfo, FunctionInfo, Import, ModuleSummary, Param, Probe, Read


@dataclass(frozen=True, slots=True)
class Parsed:
    """One file's per-file pass: its summary, or why it has none."""

    digest: str
    summary: ModuleSummary | None
    error: tuple[str, str, int] | None  # (kind, message, line)


class Malformed(Exception):
    """An entry that is not what this build writes."""


_DIGEST = re.compile(r"[0-9a-f]{40}")  # content_hash(): names a summary file, so never a path
_MAX_DEPTH = 64  # refs nest at most about 20 deep (summary.py bounds them); more is not ours


def _need(ok: bool) -> None:
    if not ok:
        raise Malformed


def _str(v) -> str:
    _need(type(v) is str)
    return v


def _int(v) -> int:
    _need(type(v) is int)
    return v


def _bool(v) -> bool:
    _need(type(v) is bool)
    return v


def _strs(v) -> tuple:
    _need(type(v) is tuple and all(type(x) is str for x in v))
    return v


def _str_pair(v) -> None:
    _need(type(v) is tuple and len(v) == 2 and type(v[0]) is str and type(v[1]) is str)


def _tuple_of(v, check) -> tuple:
    _need(type(v) is tuple)
    for x in v:
        check(x)
    return v


# --- refs (summary.py's docstring lists their shapes) -------------------------------------------
def _is_type(t, depth: int = 0) -> bool:
    if type(t) is not tuple or len(t) != 2 or depth > _MAX_DEPTH:
        return False
    kind, arg = t
    if kind == "t":
        return type(arg) is str
    if kind == "tseq":  # None: a mapping or sequence of something the resolver cannot use
        return arg is None or _is_type(arg, depth + 1)
    if kind == "tunion":
        return type(arg) is tuple and all(_is_type(x, depth + 1) for x in arg)
    if kind == "ttype":
        return _is_type(arg, depth + 1)
    if kind == "tdefault":  # (annotation or None, the default's dotted name)
        return type(arg) is tuple and len(arg) == 2 and (arg[0] is None or _is_type(arg[0], depth + 1)) \
            and type(arg[1]) is str
    return False


def _is_ref(r, depth: int = 0) -> bool:
    if type(r) is not tuple or not r or depth > _MAX_DEPTH:
        return False
    kind, n = r[0], len(r)
    if kind == "name":
        return n == 2 and type(r[1]) is str
    if kind == "attr" or kind == "getattr":
        return n == 3 and type(r[2]) is str and _is_ref(r[1], depth + 1)
    if kind == "call":
        return n == 4 and type(r[2]) is int and type(r[3]) is int and (r[1] is None or _is_ref(r[1], depth + 1))
    if kind == "sub" or kind == "iter":
        return n == 2 and _is_ref(r[1], depth + 1)
    if kind == "seq" or kind == "union":
        return n == 2 and type(r[1]) is tuple and all(_is_ref(x, depth + 1) for x in r[1])
    if kind == "type":
        return n == 2 and _is_type(r[1], depth + 1)
    if kind == "super":  # a construction through super().__init__
        return n == 1
    return False


_known_refs: set = set()  # refs already checked: most repeat across functions and files


_MEMO_LIMIT = 1_000_000  # sglang's 4,719 files hold about 215,000 distinct refs: never cleared mid-run


def _ref(r) -> tuple:
    if r not in _known_refs:  # hashing a tuple is one C call; a dict or list in it raises (a miss)
        _need(_is_ref(r))
        if len(_known_refs) > _MEMO_LIMIT:
            _known_refs.clear()
        _known_refs.add(r)
    return r


def _opt_ref(r) -> tuple | None:
    return r if r is None else _ref(r)


def _opt_type(t) -> tuple | None:
    _need(t is None or _is_type(t))
    return t


# --- summaries -----------------------------------------------------------------------------------
# The records are rebuilt with tuple.__new__ once their fields are checked (no argument parsing).
_new = tuple.__new__


def _check_params(v) -> tuple:
    _need(type(v) is tuple)
    for t in v:
        _need(type(t) is tuple and len(t) == 4 and type(t[0]) is str and type(t[1]) is int and 0 <= t[1] <= 4
              and type(t[2]) is bool and (t[3] is None or _is_type(t[3])))
    return tuple([_new(Param, t) for t in v])


_known_params: dict = {}  # parameter lists recur (about 26,000 distinct in sglang's 63,000 functions)


def _params(v) -> tuple:
    # The answer is the checked list's own rebuild, never `v`: an equal list is not an identical
    # one (1 == 1.0 == True).
    params = _known_params.get(v)
    if params is None:
        params = _check_params(v)
        if len(_known_params) > _MEMO_LIMIT:
            _known_params.clear()
        _known_params[v] = params
    return params


def _calls(v) -> tuple:
    _need(type(v) is tuple)
    for t in v:
        _need(type(t) is tuple and len(t) == 7)
        line, col, func, n, keywords, star, double_star = t
        _need(type(line) is int and type(col) is int and type(n) is int and type(star) is bool
              and type(double_star) is bool and type(keywords) is tuple)
        if keywords:
            _need(all(type(k) is str for k in keywords))
        if func not in _known_refs:
            _ref(func)
    return tuple([_new(CallSite, t) for t in v])


def _probes(v) -> tuple:
    _need(type(v) is tuple)
    for t in v:
        _need(type(t) is tuple and len(t) == 5 and type(t[0]) is int and type(t[1]) is int and type(t[3]) is str
              and type(t[4]) is str)
        _opt_ref(t[2])
    return tuple([_new(Probe, t) for t in v])


def _guards(v) -> tuple:
    _need(type(v) is tuple)
    for t in v:
        _need(type(t) is tuple and len(t) == 4 and type(t[1]) is bool and type(t[2]) is int and type(t[3]) is int)
        _ref(t[0])
    return tuple([_new(Guard, t) for t in v])


def _reads(v) -> tuple:
    _need(type(v) is tuple)
    for t in v:
        _need(type(t) is tuple and len(t) == 4 and type(t[0]) is int and type(t[2]) is str and type(t[3]) is bool)
        _ref(t[1])
    return tuple([_new(Read, t) for t in v])


def _self_attr(t) -> None:
    _need(type(t) is tuple and len(t) == 3 and type(t[2]) is int)
    _opt_ref(t[0])
    _opt_type(t[1])


def _keyword_arg(t) -> None:
    _need(type(t) is tuple and len(t) == 2 and type(t[0]) is str)
    _opt_ref(t[1])


def _construction(t) -> None:
    _need(type(t) is tuple and len(t) == 4 and type(t[3]) is bool)
    _ref(t[0])
    _tuple_of(t[1], _opt_ref)
    _tuple_of(t[2], _keyword_arg)


def _names_to(v, check) -> dict:
    _need(type(v) is dict)
    for k, values in v.items():
        _need(type(k) is str and type(values) is tuple)
        for x in values:
            check(x)
    return v


def _str_int(t) -> None:
    _need(type(t) is tuple and len(t) == 2 and type(t[0]) is str and type(t[1]) is int)


def _asserted(t) -> None:
    _need(type(t) is tuple and len(t) == 3 and type(t[1]) is int and type(t[2]) is tuple)
    _ref(t[0])
    _tuple_of(t[2], _ref)


def _gate(t) -> None:
    """(name, line) or (first line, last line, key of strings): FunctionInfo.gates."""
    _need(type(t) is tuple and (len(t) == 2 and type(t[0]) is str and type(t[1]) is int
                                or len(t) == 3 and type(t[0]) is int and type(t[1]) is int and _strs(t[2]) != ()))


def _platform_gate(t) -> None:
    _need(type(t) is tuple and len(t) == 4 and type(t[0]) is int and type(t[1]) is int and type(t[3]) is bool)
    _strs(t[2])


# Each summary record's fields, in its dataclass's order, each with how it is stored and rebuilt:
#   (field, encode: an expression over `v`, its type where a plain check of it is enough,
#    decode: check and rebuild `v` from a cache entry, own: rebuild `v` from this process's workers).
# Adding a field to a record is one row here (and a SUMMARY_VERSION bump): each record's three
# functions are generated from its rows (tests/test_codec_fields.py holds the rows to the fields).
_RECORDS = "tuple(map(tuple, v)) if v else ()"
FUNCTION_FIELDS: tuple[tuple[str, str, str | None, str, str], ...] = (
    ("name", "v", "str", "v", "v"),
    ("line", "v", "int", "v", "v"),
    ("col", "v", "int", "v", "v"),
    ("end_line", "v", "int", "v", "v"),
    ("params", _RECORDS, None, "_params(v)", "tuple([_new(Param, x) for x in v]) if v else ()"),
    ("decorators", "v", None, "_strs(v)", "v"),
    ("returns", "v", None, "_opt_type(v)", "v"),
    ("return_values", "v", None, "_tuple_of(v, _ref)", "v"),
    ("noop", "v", "bool", "v", "v"),
    ("is_async", "v", "bool", "v", "v"),
    ("locals", "v", None, "_names_to(v, _ref) if v else {}", "v"),
    ("self_attrs", "v", None, "_names_to(v, _self_attr) if v else {}", "v"),
    ("calls", _RECORDS, None, "_calls(v)", "tuple([_new(CallSite, x) for x in v]) if v else ()"),
    ("probes", _RECORDS, None, "_probes(v)", "tuple([_new(Probe, x) for x in v]) if v else ()"),
    ("constructions", "v", None, "_tuple_of(v, _construction)", "v"),
    ("unimplemented", "v", "bool", "v", "v"),
    ("gates", "v", None, "_tuple_of(v, _gate)", "v"),
    ("guards", _RECORDS, None, "_guards(v)", "tuple([_new(Guard, x) for x in v]) if v else ()"),
    ("falsy_defaults", "v", None, "_strs(v)", "v"),
    ("reads", _RECORDS, None, "_reads(v)", "tuple([_new(Read, x) for x in v]) if v else ()"),
    ("platform_gates", "v", None, "_tuple_of(v, _platform_gate)", "v"),
    ("checks_only", "v", "bool", "v", "v"),
    ("falsy_stores", "v", None, "_tuple_of(v, _str_int)", "v"),
    ("other_stores", "v", None, "_strs(v)", "v"),
    ("declarations", "v", None, "_tuple_of(v, _str_int)", "v"),
    ("asserted", "v", None, "_tuple_of(v, _asserted)", "v"),
)
CLASS_FIELDS: tuple[tuple[str, str, str | None, str, str], ...] = (
    ("name", "v", "str", "v", "v"),
    ("line", "v", "int", "v", "v"),
    ("col", "v", "int", "v", "v"),
    ("end_line", "v", "int", "v", "v"),
    ("bases", "v", None, "_tuple_of(v, _ref)", "v"),
    ("decorators", "v", None, "_strs(v)", "v"),
    ("methods", "tuple([_enc_function(f) for f in v.values()])", None, "_named(v, _dec_function)",
     "{m[0]: _own_function(m) for m in v}"),
    ("attrs", "tuple([(k, a.line, a.annotation, a.value) for k, a in v.items()])", None, "_class_attrs(v)",
     "{a[0]: ClassAttr(a[1], a[2], a[3]) for a in v}"),
    ("falsy_attrs", "v", None, "_strs(v)", "v"),
)
SUMMARY_FIELDS: tuple[tuple[str, str, str | None, str, str], ...] = (
    ("lines", "v", "int", "v", "v"),
    ("imports", "tuple(map(tuple, v))", "tuple", "tuple(map(_import, v))", "tuple([_new(Import, i) for i in v])"),
    ("classes", "tuple([_enc_class(c) for c in v.values()])", None, "_named(v, _dec_class)",
     "{c[0]: _own_class(c) for c in v}"),
    ("functions", "tuple([_enc_function(f) for f in v.values()])", None, "_named(v, _dec_function)",
     "{f[0]: _own_function(f) for f in v}"),
    ("toplevel", "_enc_function(v)", None, "_dec_function(v)", "_own_function(v)"),
    ("dunder_all", "v", None, "v if v is None else _strs(v)", "v"),
    ("unguarded_imports", "v", None, "_tuple_of(v, _int)", "v"),  # indices into `imports`: checked after
    ("slot_reads", "v", None, "_tuple_of(v, _str_pair)", "v"),
    ("name_literals", "v", None, "_tuple_of(v, _name_literal)", "v"),
    ("attr_values", "v", None, "_strs(v)", "v"),
    ("name_values", "v", None, "_strs(v)", "v"),
    ("handed", "v", None, "_tuple_of(v, _str_pair)", "v"),
    ("string_named", "v", None, "_tuple_of(v, _str_pair)", "v"),
    ("qualname_strings", "v", None, "_strs(v)", "v"),
)
RECORD_FIELDS = {FunctionInfo: FUNCTION_FIELDS, ClassInfo: CLASS_FIELDS, ModuleSummary: SUMMARY_FIELDS}


def _record_codec(short: str, record: type, rows: tuple) -> str:
    """The source of _enc_<short>, _dec_<short> and _own_<short> for one record, unrolled as one
    would write them by hand (the warm path rebuilds some 60,000 functions per run: no loop per
    field)."""
    names = [f"v{i}" for i in range(len(rows))]
    at = {field: name for (field, *_), name in zip(rows, names, strict=True)}

    def on(expr: str, value: str) -> str:
        return value if expr == "v" else "(" + re.sub(r"\bv\b", value, expr) + ")"

    enc = ", ".join(on(e, f"f.{f}") for f, e, _, _, _ in rows)
    checks = " and ".join(f"type({at[f]}) is {t}" for f, _, t, _, _ in rows if t) or "True"
    dec = ", ".join(on(d, at[f]) for f, _, _, d, _ in rows)
    own = ", ".join(on(o, at[f]) for f, _, _, _, o in rows)
    unpack = ", ".join(names)
    cls = record.__name__
    return (f"def _enc_{short}(f):\n    return ({enc},)\n\n"
            f"def _dec_{short}(t):\n    _need(type(t) is tuple and len(t) == {len(names)})\n"
            f"    ({unpack},) = t\n    _need({checks})\n    return {cls}({dec})\n\n"
            f"def _own_{short}(t):\n    ({unpack},) = t\n    return {cls}({own})\n")


for _short, _record in (("function", FunctionInfo), ("class", ClassInfo), ("summary", ModuleSummary)):
    exec(compile(_record_codec(_short, _record, RECORD_FIELDS[_record]), f"<{__name__} {_record.__name__} fields>",
                 "exec"), globals())
# Defined by the loop above, for each of function, class and summary:
#   _enc_<record>: the record -> plain tuple; _dec_<record>: a cache entry's tuple, checked -> the
#   record; _own_<record>: this process's workers' tuple -> the record.


def _named(v, decode) -> dict:
    """Encoded records (functions, classes) as a dict by their names, each checked by `decode`."""
    _need(type(v) is tuple)
    out = {}
    for t in v:
        r = decode(t)
        out[r.name] = r
    return out


def _class_attrs(v) -> dict[str, ClassAttr]:
    _need(type(v) is tuple)
    out = {}
    for a in v:
        _need(type(a) is tuple and len(a) == 4)
        out[_str(a[0])] = ClassAttr(_int(a[1]), _opt_type(a[2]), _opt_ref(a[3]))
    return out


def _import(t) -> Import:
    _need(type(t) is tuple and len(t) == 4)
    local, module, name, level = t
    _need(name is None or type(name) is str)
    return Import(_str(local), _str(module), name, _int(level))


def _name_literal(t) -> None:
    _need(type(t) is tuple and len(t) == 2 and type(t[0]) is str)
    _strs(t[1])


def encode_parsed(p: Parsed) -> tuple:
    return (p.digest, None if p.summary is None else _enc_summary(p.summary), p.error)  # noqa: F821


def decode_parsed(plain, digest: str) -> Parsed:
    """A summary entry, which must be the one for `digest` (its file name)."""
    _need(type(plain) is tuple and len(plain) == 3 and plain[0] == digest)
    _, summary, error = plain
    if summary is None:
        _need(type(error) is tuple and len(error) == 3)
        return Parsed(digest, None, (_str(error[0]), _str(error[1]), _int(error[2])))
    _need(error is None)
    s = _dec_summary(summary)  # noqa: F821 (generated above)
    n = len(s.imports)
    _need(all(0 <= i < n for i in s.unguarded_imports))
    return Parsed(digest, s, None)


# --- summaries this process's own pool workers encoded ------------------------------------------
# A worker hands the parent the plain form it made (or checked) itself, through the pool's pipe:
# marshal and this rebuild cost the parent a fraction of what pickling the objects costs both
# sides. Nothing read from the cache folder comes this way unchecked: a worker decodes a cache
# entry with decode_parsed first and passes on only an entry that decoded, the very bytes it
# checked (Cache.get_checked_plain). Whatever decode_parsed accepts, this rebuild reads the same way.
def decode_own(plain) -> Parsed:
    """The summary entry a pool worker of this process encoded (encode_parsed), rebuilt unchecked."""
    digest, summary, error = plain
    if summary is None:
        return Parsed(digest, None, error)
    return Parsed(digest, _own_summary(summary), None)  # noqa: F821 (generated above)


# --- the file map: path -> ((mtime_ns, size, ctime_ns, inode), content digest) ------------------
def encode_stats(stats: dict) -> dict:
    return stats


def decode_stats(plain) -> dict:
    _need(type(plain) is dict)
    match = _DIGEST.fullmatch
    for path, entry in plain.items():
        _need(type(path) is str and type(entry) is tuple and len(entry) == 2)
        seen, digest = entry
        _need(type(seen) is tuple and len(seen) == 4 and all(type(n) is int for n in seen)
              and type(digest) is str and match(digest) is not None)
    return plain


# --- a whole run's result ----------------------------------------------------------------------
def encode_result(result: dict) -> tuple:
    findings = tuple((f.code, f.name, f.severity, f.path, f.line, f.column, f.message, f.class_name, f.member,
                      f.targets, tuple((e.path, e.line, e.note, e.supporting, e.declared) for e in f.evidence),
                      f.details, f.confidence,
                      tuple((r.signal, r.effect, r.path, r.line, r.note) for r in f.confidence_reasons))
                     for f in result["findings"])
    errors = tuple((e.path, e.kind, e.message, e.line) for e in result["file_errors"])
    stats = dict(result["stats"])
    if "outside_bases" in stats:  # package -> [deriving classes, distinct bases]: kept as triples
        stats["outside_bases"] = tuple((k, n, d) for k, (n, d) in stats["outside_bases"].items())
    return (findings, errors, stats, (result["reads"].files, result["reads"].absent))


def _finding(t) -> Finding:
    _need(type(t) is tuple and len(t) == 14)
    (code, name, severity, path, line, column, message, class_name, member, targets, evidence, details,
     confidence, reasons) = t
    _need(type(evidence) is tuple and type(details) is tuple and confidence in LEVELS and type(reasons) is tuple)
    why = []
    for r in reasons:
        _need(type(r) is tuple and len(r) == 5)
        why.append(Reason(_str(r[0]), _str(r[1]), _str(r[2]), _int(r[3]), _str(r[4])))
    links = []
    for e in evidence:
        _need(type(e) is tuple and len(e) == 5 and type(e[3]) is bool and type(e[4]) is bool)
        links.append(Evidence(_str(e[0]), _int(e[1]), _str(e[2]), e[3], e[4]))
    for d in details:
        _need(type(d) is tuple and len(d) == 2 and type(d[0]) is str and type(d[1]) is str)
    return Finding(_str(code), _str(name), _str(severity), _str(path), _int(line), _int(column), _str(message),
                   _str(class_name), _str(member), _strs(targets), tuple(links), details, confidence, tuple(why))


def _file_error(t) -> FileError:
    _need(type(t) is tuple and len(t) == 4)
    return FileError(_str(t[0]), _str(t[1]), _str(t[2]), _int(t[3]))


def decode_result(plain) -> dict:
    _need(type(plain) is tuple and len(plain) == 4)
    findings, errors, stats, reads = plain
    _need(type(findings) is tuple and type(errors) is tuple and type(stats) is dict)
    outside = stats.pop("outside_bases", ())
    for k, v in stats.items():
        _need(type(k) is str and type(v) in (int, float))
    _need(type(outside) is tuple and all(type(t) is tuple and len(t) == 3 and type(t[0]) is str
                                         and type(t[1]) is int and type(t[2]) is int for t in outside))
    stats["outside_bases"] = {k: [n, d] for k, n, d in outside}
    return {"findings": list(map(_finding, findings)), "file_errors": list(map(_file_error, errors)),
            "stats": stats, "reads": _read_set(reads)}


def _read_set(t) -> ReadSet:
    _need(type(t) is tuple and len(t) == 2 and type(t[0]) is tuple)
    for f in t[0]:
        _need(len(_strs(f)) == 2)
    return ReadSet(t[0], _strs(t[1]))


# --- astroid's answers: (content digest, line, col, kind) -> (in-tree classes, the project files
# the answer came through as (path, digest), the project modules astroid looked for and did not find)
def encode_memo(memo: dict) -> tuple:
    return tuple((*key, value) for key, value in memo.items())


def decode_memo(plain) -> dict:
    _need(type(plain) is tuple)
    memo = {}
    for t in plain:
        _need(type(t) is tuple and len(t) == 5)
        digest, line, col, kind, value = t
        _need(type(digest) is str and type(line) is int and type(col) is int and type(kind) is str
              and type(value) is tuple and len(value) == 3)
        quals, files, absent = value
        _strs(quals), _strs(absent)
        _need(type(files) is tuple)
        for f in files:
            _need(len(_strs(f)) == 2)
        memo[(digest, line, col, kind)] = value
    return memo


# Named entries by the kind their name starts with (cache.entry_name): (encoder, decoder).
_BLOB = re.compile(r"[0-9a-f]{40}")


def decode_blobs(plain) -> dict:
    """Content digest -> git blob id (revision_reuse.work_files)."""
    _need(type(plain) is dict)
    for digest, blob in plain.items():
        _need(type(digest) is str and _DIGEST.fullmatch(digest) is not None and type(blob) is str
              and _BLOB.fullmatch(blob) is not None)
    return plain


NAMED = {"stat": (encode_stats, decode_stats), "result": (encode_result, decode_result),
         "astroid": (encode_memo, decode_memo), "blobs": (dict, decode_blobs)}
