"""The platform vocabulary: general words serving code uses for the hardware a piece of code runs on.

Serving stacks keep platform-only code apart by convention: a package folder named for the
platform (`hardware_backend/npu/`), a module, class or function named for it (`ascend_backend.py`,
`XpuGDNBackend`, `forward_npu`), a predicate test (`if is_npu():`, `if _is_hip:`,
`if self.is_npu:`, `device == "npu"`), a kernel package named for it (`torch_npu`). The words,
each mapped to the one platform it names:

    npu, ascend -> npu        hip, rocm, amd -> hip     xpu -> xpu       mps -> mps
    tpu -> tpu                musa -> musa              hpu, gaudi -> hpu
    cuda -> cuda              cpu -> cpu

`cuda` and `cpu` count only as package folders, kernel package names and predicate tests
(`is_cuda()`), never as a word in a name or a compared string: PyTorch names its device API
`cuda` on ROCm too (`cuda_graph_runner` runs on AMD, `tensor.device.type == "cuda"` holds there),
and `cpu` in a name or a device string is mostly host memory (`seq_lens_cpu`, `device="cpu"`).

The vocabulary is read by the per-file pass (summary.py records predicate tests and imports in
these words): changing it changes summaries, so bump SUMMARY_VERSION with it.
"""

from __future__ import annotations

import ast
import re

PLATFORM_WORDS = {
    "npu": "npu", "ascend": "npu",
    "hip": "hip", "rocm": "hip", "amd": "hip",
    "xpu": "xpu", "mps": "mps", "tpu": "tpu", "musa": "musa",
    "hpu": "hpu", "gaudi": "hpu",
    "cuda": "cuda", "cpu": "cpu",
}
# Words too common in names and device strings that are not about the platform (see above).
_NOT_IN_NAMES = {"cuda", "cpu"}
NAME_WORDS = {w: p for w, p in PLATFORM_WORDS.items() if w not in _NOT_IN_NAMES}

_CAMEL = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")


def predicate_platform(identifier: str) -> str | None:
    """`is_npu`, `_is_hip`, `is_rocm` (a function called, a flag read): the platform it tests."""
    name = identifier.lstrip("_")
    if name.startswith("is_"):
        return PLATFORM_WORDS.get(name[3:])
    return None


def snake_platforms(name: str) -> set[str]:
    """Platforms a snake_case name is named for (`forward_npu`, `dsa_npu_indexer`); a predicate's
    own name (`is_npu`) is not platform-only code."""
    if name.lstrip("_").startswith("is_"):
        return set()
    return {NAME_WORDS[t] for t in name.lower().split("_") if t in NAME_WORDS}


def camel_platforms(name: str) -> set[str]:
    """Platforms a CamelCase class name is named for: a word (`AscendAttnBackend`, `XpuGDN...`)
    or an acronym run that starts or ends with one (`NPUMLATokenToKVPool`, `DSANPUIndexer`)."""
    out = set()
    for token in _CAMEL.findall(name):
        low = token.lower()
        if low in NAME_WORDS:
            out.add(NAME_WORDS[low])
        elif token.isupper() and len(token) > 3:
            for w, p in NAME_WORDS.items():
                if len(w) >= 3 and (low.startswith(w) or low.endswith(w)):
                    out.add(p)
    return out


def module_platforms(module: str) -> set[str]:
    """Platforms a dotted module path is named for: a package folder named for a platform
    (`hardware_backend.npu`, `kernel_plugins.amd`) or a module named for one (`ascend_backend`)."""
    out = set()
    for part in module.split("."):
        if part in PLATFORM_WORDS:
            out.add(PLATFORM_WORDS[part])
        else:
            out |= snake_platforms(part)
    return out


def import_platforms(module: str) -> set[str]:
    """Platforms a package from outside the tree belongs to, by its top-level name (`torch_npu`,
    `sgl_kernel_npu.attention`, `flash_attn_cuda`): a distribution built for one platform. A submodule named for a
    platform inside a general package (`kernels.plugins.amd.spec`) may be importable everywhere,
    and PyTorch's own device modules (`torch.cuda`) are its dispatch API: neither counts."""
    top = module.split(".", 1)[0]
    if top == "torch":
        return set()
    return {PLATFORM_WORDS[t] for t in top.lower().split("_") if t in PLATFORM_WORDS}


def test_platform(node) -> tuple | None:
    """What an `if` test says of the platform, for its body and for its `else`: a pair of facts,
    each None or (platforms, negated), "the platform is (negated: is not) one of these".
    Reads predicates (`is_npu()`, `_is_hip`, `self.is_npu`, `current_platform.is_rocm()`),
    comparisons with a platform word (`device == "npu"`), `not`, and `and`/`or` of those."""
    kind = type(node)  # exact tests: the parser makes no subclasses of these
    if kind is ast.UnaryOp and type(node.op) is ast.Not:
        inner = test_platform(node.operand)
        return (inner[1], inner[0]) if inner else None
    if kind is ast.BoolOp:
        parts = [test_platform(v) for v in node.values]
        if type(node.op) is ast.And:
            # The body needs every conjunct: the first that names a platform holds there.
            body = next((p[0] for p in parts if p and p[0]), None)
            return (body, None) if body else None
        if all(p and p[0] and not p[0][1] for p in parts):  # is_a() or is_b()
            words = frozenset().union(*(p[0][0] for p in parts))
            return ((words, False), (words, True))
        return None
    if kind is ast.Call and not node.args:
        node = node.func
        kind = type(node)
    name = node.id if kind is ast.Name else node.attr if kind is ast.Attribute else None
    if name is not None:
        plat = predicate_platform(name)
        return ((frozenset([plat]), False), (frozenset([plat]), True)) if plat else None
    if kind is ast.Compare and len(node.ops) == 1 and type(node.ops[0]) in (ast.Eq, ast.NotEq):
        for side in (node.left, node.comparators[0]):
            if type(side) is ast.Constant and type(side.value) is str and side.value in NAME_WORDS:
                fact = (frozenset([NAME_WORDS[side.value]]), False)
                neg = (fact[0], True)
                return (fact, neg) if type(node.ops[0]) is ast.Eq else (neg, fact)
    return None


_EXITS = (ast.Return, ast.Raise, ast.Continue, ast.Break)


def platform_gates(body: list, end: int, module_level: bool = False) -> tuple:
    """The line ranges of a function (or module) body where a platform test holds:
    ((first line, last line, platforms, negated), ...). An `if` test holds in its body and its
    negation in its `else`; one whose body always leaves (`if not is_npu(): return`) and an
    `assert` hold for the rest of their block. A function's nested functions are scanned too:
    the per-file pass summarises closures in their enclosing function."""
    out: list = []
    _gather(body, end, [out], {}, module_level)
    return tuple(out)


def _gates_of(stmt, end: int) -> list:
    """The gates an `if` or an `assert` statement sets up in a block ending at line `end`."""
    out: list = []
    facts = test_platform(stmt.test)
    if not facts:
        return out
    if type(stmt) is ast.Assert:
        if facts[0] and stmt.end_lineno < end:
            out.append((stmt.end_lineno + 1, end, *_plain(facts[0])))
        return out
    body_fact, else_fact = facts
    if body_fact:
        out.append((stmt.body[0].lineno, stmt.body[-1].end_lineno, *_plain(body_fact)))
    if else_fact and stmt.orelse:
        out.append((stmt.orelse[0].lineno, stmt.orelse[-1].end_lineno, *_plain(else_fact)))
    elif else_fact and isinstance(stmt.body[-1], _EXITS) and stmt.end_lineno < end:
        out.append((stmt.end_lineno + 1, end, *_plain(else_fact)))
    return out


def _plain(fact: tuple) -> tuple:
    return (tuple(sorted(fact[0])), fact[1])


def add_platform_gates(tree: ast.Module, summary) -> None:
    """Fill `platform_gates` on a module's summarised functions (matched by name and line), in one
    walk over the statements: a test found inside a closure counts for the closure's enclosing
    functions too (each function's gates are those platform_gates would give for its body)."""
    by_line = {(f.name, f.line): f for f in summary.functions.values()}
    for c in summary.classes.values():
        by_line.update(((f.name, f.line), f) for f in c.methods.values())
    module: list = []
    _gather(tree.body, summary.lines, [module], by_line, True)
    summary.toplevel.platform_gates = tuple(module)


_BLOCKS = ("body", "orelse", "finalbody", "handlers")
_BLOCKS_OF: dict[type, tuple[str, ...]] = {}  # the statement lists each node type holds


def _gather(body: list, end: int, sinks: list, by_line: dict, module_level: bool) -> None:
    """The gates of `body` (a block ending at line `end`) for every list in `sinks` (the scans of
    the functions around it: a closure's tests hold in its enclosing functions' gates too, the
    module's scan leaves functions and every scan leaves classes to their own), and each function
    of `by_line` met on the way gets a scan of its own."""
    for stmt in body:
        kind = type(stmt)
        if kind is ast.ClassDef:
            # Every scan skips a class; its methods are functions of their own.
            _gather(stmt.body, stmt.body[-1].end_lineno or end, [], by_line, False)
            continue
        if kind is ast.FunctionDef or kind is ast.AsyncFunctionDef:
            fn = by_line.get((stmt.name, stmt.lineno))
            own: list = []
            around = [] if module_level else sinks
            _gather(stmt.body, stmt.body[-1].end_lineno or end, around + [own] if fn is not None else around,
                    by_line, False)
            if fn is not None:
                fn.platform_gates = tuple(own)
            continue
        if sinks and (kind is ast.If or kind is ast.Assert):
            found = _gates_of(stmt, end)
            for sink in sinks:
                sink.extend(found)
        blocks = _BLOCKS_OF.get(kind)
        if blocks is None:
            blocks = _BLOCKS_OF[kind] = tuple(n for n in _BLOCKS if n in getattr(kind, "_fields", ()))
        for name in blocks:
            inner = getattr(stmt, name, None)
            if inner and isinstance(inner, list):
                _gather(inner, inner[-1].end_lineno or end, sinks, by_line, module_level)
