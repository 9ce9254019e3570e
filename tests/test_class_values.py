"""Class values the resolver follows: `type[X]` annotations, parameters whose default is a class,
`@overload` stubs standing for the implementation's return, and factories whose return statements
are not all understood (then the annotation answers, not the one `return` it could read)."""

from __future__ import annotations

from conftest import lint, write_tree

from attn_lint.linter.app.engine import Settings, analyse
from attn_lint.linter.model.resolve import Scope

_MANAGERS = """
from typing import Literal, Optional, Type, overload

class Args:
    pass

class Manager:
    def start(self):
        raise NotImplementedError

class TcpManager(Manager):
    def start(self):
        return 1

    def set_buffers(self, buffers, slot_ids=None):
        self.buffers = buffers

class RdmaManager(Manager):
    def start(self):
        return 2

    def set_buffers(self, buffers):
        self.buffers = buffers

_TABLE = {"tcp": TcpManager, "rdma": RdmaManager}

@overload
def get_class(kind: Literal["args"]) -> Type[Args]: ...
@overload
def get_class(kind: Literal["manager"]) -> Type[Manager]: ...
def get_class(kind, backend="tcp") -> Optional[type]:
    if kind == "args":
        return Args
    return _TABLE[backend]

class Queue:
    def init_manager(self, buffers, slots):
        manager_class = get_class("manager")
        manager = manager_class()
        if hasattr(manager, "set_buffers"):
            manager.set_buffers(buffers, slot_ids=slots)
        return manager
"""


# No stubs; the implementation itself annotated with the family's base class.
_STUBLESS = _MANAGERS.replace("@overload\ndef get_class(kind: Literal[\"args\"]) -> Type[Args]: ...\n", "").replace(
    "@overload\ndef get_class(kind: Literal[\"manager\"]) -> Type[Manager]: ...\n", "").replace(
    "-> Optional[type]:", "-> Type[Manager]:")


def _context(tmp_path, files):
    return analyse([str(write_tree(tmp_path, files))], Settings(cache_dir=None, jobs=1), keep_context=True).context


def _types_of(ctx, module, cls, method, local):
    fn = ctx.index.modules[module].summary.classes[cls].methods[method]
    return ctx.resolver.resolve(("name", local), Scope(module, f"{module}.{cls}", fn)).types


def test_overload_stubs_answer_for_the_implementation(tmp_path):
    files = {"pkg/__init__.py": "", "pkg/conn.py": _MANAGERS}
    ctx = _context(tmp_path, files)
    assert "pkg.conn.Manager" in _types_of(ctx, "pkg.conn", "Queue", "init_manager", "manager")
    found = [f for f in lint(write_tree(tmp_path / "b", files)).findings if f.code == "AL002"]
    assert [(f.member, f.targets) for f in found] == [("set_buffers", ("pkg.conn.RdmaManager",))]


def test_a_return_the_resolver_cannot_read_leaves_the_annotation_in_charge(tmp_path):
    # `return TcpManager` beside `return _TABLE[backend]`: the annotation (`Type[Manager]`) answers,
    # not the one readable return.
    src = _STUBLESS.replace("if kind == \"args\":\n        return Args", "if kind == \"tcp\":\n        return TcpManager")
    ctx = _context(tmp_path, {"pkg/__init__.py": "", "pkg/conn.py": src})
    assert _types_of(ctx, "pkg.conn", "Queue", "init_manager", "manager") == {"pkg.conn.Manager"}


def test_a_complete_factory_is_still_typed_by_its_returns(tmp_path):
    src = _STUBLESS.replace("if kind == \"args\":\n        return Args", "if kind == \"tcp\":\n        return TcpManager")
    src = src.replace("    return _TABLE[backend]", "    return RdmaManager")
    ctx = _context(tmp_path, {"pkg/__init__.py": "", "pkg/conn.py": src})
    assert _types_of(ctx, "pkg.conn", "Queue", "init_manager", "manager") == {"pkg.conn.TcpManager",
                                                                               "pkg.conn.RdmaManager"}


_POOLS = """
class Pool:
    def copy_out(self, indices):
        raise NotImplementedError

class PlainPool(Pool):
    def copy_out(self, indices):
        return indices

class Stacked(Pool):
    def __init__(self, inner_cls: Pool = PlainPool, size_hint: int = MAX_SIZE):
        self.inner = inner_cls()
        self.size_hint = size_hint

    def copy_out(self, indices):
        return self.inner.copy_out(indices)

MAX_SIZE = 8
"""


def test_a_class_default_makes_the_parameter_class_valued(tmp_path):
    ctx = _context(tmp_path, {"pkg/__init__.py": "", "pkg/pools.py": _POOLS})
    fn = ctx.index.modules["pkg.pools"].summary.classes["Stacked"].methods["__init__"]
    scope = Scope("pkg.pools", "pkg.pools.Stacked", fn)
    assert ctx.resolver.resolve(("name", "inner_cls"), scope).types == {("cls", "pkg.pools.Pool")}
    assert ctx.resolver.resolve(("call", ("name", "inner_cls"), 0, 0), scope).types == {"pkg.pools.Pool"}
    # A capitalised constant default is not a class: the parameter is what its annotation says.
    assert ctx.resolver.resolve(("name", "size_hint"), scope).types == frozenset()
    assert "pkg.pools.Stacked" in ctx.model.wrappers


def test_type_annotation_gives_the_class(tmp_path):
    src = _POOLS.replace("inner_cls: Pool = PlainPool", "inner_cls: type[Pool]")
    ctx = _context(tmp_path, {"pkg/__init__.py": "", "pkg/pools.py": src})
    fn = ctx.index.modules["pkg.pools"].summary.classes["Stacked"].methods["__init__"]
    scope = Scope("pkg.pools", "pkg.pools.Stacked", fn)
    assert ctx.resolver.resolve(("name", "inner_cls"), scope).types == {("cls", "pkg.pools.Pool")}


def test_a_closure_return_is_not_the_factory_return(tmp_path):
    # The nested `make` returns an unreadable class; `build` itself returns one known class.
    src = _STUBLESS + """
def build(kind) -> Manager:
    leaf_cls = get_class(kind)

    def make():
        return leaf_cls()

    return TcpManager()

class User:
    def run(self):
        m = build("manager")
        return m
"""
    ctx = _context(tmp_path, {"pkg/__init__.py": "", "pkg/conn.py": src})
    assert ctx.index.modules["pkg.conn"].summary.functions["build"].return_values == (
        ("call", ("name", "TcpManager"), src.splitlines().index("    return TcpManager()") + 1, 11),)
    assert _types_of(ctx, "pkg.conn", "User", "run", "m") == {"pkg.conn.TcpManager"}


def test_method_overload_stubs_answer_for_the_implementation(tmp_path):
    src = _MANAGERS + """
class Registry:
    @overload
    def lookup(self, kind: Literal["args"]) -> Type[Args]: ...
    @overload
    def lookup(self, kind: Literal["manager"]) -> Type[Manager]: ...
    def lookup(self, kind, backend="tcp") -> Optional[type]:
        return _TABLE[backend]

    def build(self):
        manager = self.lookup("manager")()
        return manager
"""
    ctx = _context(tmp_path, {"pkg/__init__.py": "", "pkg/conn.py": src})
    assert {"pkg.conn.Args", "pkg.conn.Manager"} <= _types_of(ctx, "pkg.conn", "Registry", "build", "manager")
