"""Stand-ins: objects that take the place of what verification cannot or must not run.

Two kinds live here.

* **Permissive stand-ins** (``Standin``) replace modules that fail to import when a user module is
  loaded in isolation (``torch``, ``triton``, ``sgl_kernel``...), and fill the arguments and
  attributes a real method reads. Any attribute is another stand-in; calling one gives a stand-in
  (or, called with a single function or class, returns it unchanged, so ``@torch.compile`` and
  ``@torch.no_grad()`` leave the decorated code in place); it is subscriptable (``Tensor[int]``),
  iterable (empty), usable as a context manager and, through ``__mro_entries__``, as a base class
  (``class Layer(nn.Module)`` gives a real class deriving from a plain stand-in base). It is
  **falsy**, so ``if torch.cuda.is_available():`` takes the branch a machine without the package
  would take. Instances of classes deriving from a stand-in base have no ``__getattr__``: a probe
  on a wrapper must answer for the wrapper's own code, not for a stand-in.

* **Recording delegates** (``make_delegate``) replace the backends a wrapper forwards to. Each
  defines the hook under test, with exactly the signature of the real implementation when one is
  given, and records every attempt to call it and every time its body runs. A call that cannot
  bind raises Python's own TypeError, worded as for the real class (the stand-in's class carries
  the real class's name).
"""

from __future__ import annotations

import inspect
import keyword
import types
from dataclasses import dataclass, field
from typing import Any

from ..linter.perfile.summary import Param

_EMPTY = inspect.Parameter.empty


# --------------------------------------------------------------------------------------------
# Permissive stand-ins
# --------------------------------------------------------------------------------------------

class StandinBase:
    """The real class a stand-in turns into when it is used as a base class.

    Accepts any constructor and subclass arguments and defines nothing else: in particular no
    ``__getattr__``, so ``hasattr`` on a subclass instance answers for the subclass's own code.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def __init_subclass__(cls, **kwargs: Any) -> None:
        pass


_NAME = object()
# The explorer of runtime_check/pairing.py while it runs a construction path; None otherwise, and
# then every stand-in behaves as documented above.
EXPLORER: Any = None


def set_explorer(explorer: Any) -> Any:
    """Install ``explorer`` (None: none); returns the previous one."""
    global EXPLORER
    previous, EXPLORER = EXPLORER, explorer
    return previous

# Module dunders a module body may read from an absent package: `torch.__version__ >= "2.5"` is
# False with "0.0.0", the branch a machine without the package would take.
_DUNDER_VALUES = {"__path__": [], "__all__": [], "__version__": "0.0.0", "__file__": "", "__name__": _NAME,
                  "__qualname__": _NAME, "__doc__": None}


class Standin:
    """A permissive stand-in for a module, class, function or value that is absent.

    ``_attn_lint_name`` is the dotted name it stands for (for messages); every other attribute
    is produced on demand. Dunder lookups that Python's machinery uses to detect protocols
    (``__wrapped__``, ``__signature__``, ``__fspath__``...) raise AttributeError, so inspect and
    the import system do not mistake a stand-in for something it is not.
    """

    __slots__ = ("_attn_lint_name", "_attn_lint_children", "_attn_lint_base")

    def __init__(self, name: str = "<stand-in>") -> None:
        object.__setattr__(self, "_attn_lint_name", name)
        object.__setattr__(self, "_attn_lint_children", {})
        object.__setattr__(self, "_attn_lint_base", None)

    # --- attributes ------------------------------------------------------------------------
    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            if name in _DUNDER_VALUES:
                value = _DUNDER_VALUES[name]
                return object.__getattribute__(self, "_attn_lint_name") if value is _NAME else value
            raise AttributeError(name)
        children = object.__getattribute__(self, "_attn_lint_children")
        child = children.get(name)
        if child is None:
            child = children[name] = Standin(f"{object.__getattribute__(self, '_attn_lint_name')}.{name}")
        return child

    def __setattr__(self, name: str, value: Any) -> None:
        object.__getattribute__(self, "_attn_lint_children")[name] = value

    def __delattr__(self, name: str) -> None:
        object.__getattribute__(self, "_attn_lint_children").pop(name, None)

    # --- calls, decorators, base classes ---------------------------------------------------
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if len(args) == 1 and not kwargs and (inspect.isroutine(args[0]) or isinstance(args[0], type)
                                              or isinstance(args[0], (staticmethod, classmethod, property))):
            return args[0]  # used as a decorator: keep the user's code
        return Standin(f"{object.__getattribute__(self, '_attn_lint_name')}()")

    def __mro_entries__(self, bases: tuple) -> tuple:
        base = object.__getattribute__(self, "_attn_lint_base")
        if base is None:
            name = object.__getattribute__(self, "_attn_lint_name")
            short = name.rsplit(".", 1)[-1].replace("()", "") or "Standin"
            if not short.isidentifier() or keyword.iskeyword(short):
                short = "Standin"
            base = type(short, (StandinBase,), {"__module__": "attn_lint.standin",
                                                "__qualname__": f"<stand-in {name}>"})
            object.__setattr__(self, "_attn_lint_base", base)
        return (base,)

    def __instancecheck__(self, instance: Any) -> bool:  # isinstance(x, torch.Tensor)
        return False

    # isinstance(standin, SomeConfig) reads `__class__`: while a construction path is explored
    # (pairing.py) that is a test the stand-in cannot answer for a real input, so it is noted.
    @property
    def __class__(self):  # type: ignore[override]
        if EXPLORER is not None:
            EXPLORER.unmodelled(self, "a class test")
        return Standin

    def __subclasscheck__(self, subclass: Any) -> bool:
        return False

    # --- containers and typing -------------------------------------------------------------
    def __getitem__(self, key: Any) -> Any:
        return Standin(f"{object.__getattribute__(self, '_attn_lint_name')}[...]")

    def __setitem__(self, key: Any, value: Any) -> None:
        pass

    def __delitem__(self, key: Any) -> None:
        pass

    def __iter__(self):
        if EXPLORER is not None:
            EXPLORER.unmodelled(self, "iteration")
        return iter(())

    def __len__(self) -> int:
        if EXPLORER is not None:
            EXPLORER.unmodelled(self, "len()")
        return 0

    def __contains__(self, item: Any) -> bool:
        if EXPLORER is not None:
            return EXPLORER.contains(self, item)
        return False

    def __bool__(self) -> bool:
        # Falsy (the branch a machine without the package takes); while a construction path is
        # explored, a choice point: both branches are taken, one run each.
        if EXPLORER is not None:
            return EXPLORER.truth(self)
        return False

    def __or__(self, other: Any) -> Any:  # `Tensor | None` in annotations evaluated at runtime
        return self

    __ror__ = __or__

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: Any) -> bool:
        return False

    async def __aenter__(self) -> Any:
        return self

    async def __aexit__(self, *exc: Any) -> bool:
        return False

    # --- numbers, comparisons, text --------------------------------------------------------
    def __index__(self) -> int:
        return 0

    def __int__(self) -> int:
        return 0

    def __float__(self) -> float:
        return 0.0

    def __hash__(self) -> int:
        if EXPLORER is not None:
            return EXPLORER.hash_of(self)
        return id(self)

    def __eq__(self, other: Any) -> bool:
        # While a construction path is explored, comparing an input with one of the code's own
        # constants (`name == "flashinfer"`) is a choice point: the input is that value, or not.
        if EXPLORER is not None:
            return EXPLORER.equals(self, other)
        return self is other

    def __ne__(self, other: Any) -> bool:
        return not self.__eq__(other)

    def __lt__(self, other: Any) -> bool:
        if EXPLORER is not None:
            EXPLORER.unmodelled(self, "an ordering comparison")
        return False

    __le__ = __gt__ = __ge__ = __lt__

    def __repr__(self) -> str:
        return f"<stand-in {object.__getattribute__(self, '_attn_lint_name')}>"

    def __str__(self) -> str:
        return object.__getattribute__(self, "_attn_lint_name")

    def __format__(self, spec: str) -> str:
        return str(self)

    def __fspath__(self) -> str:
        raise TypeError("a stand-in is not a path")

    def __reduce__(self):
        raise TypeError("a stand-in cannot be pickled")

    # A stand-in type inside a pydantic model's annotations (`Union[Known, xgrammar.StructuralTag]`)
    # validates anything, so the model class can be built.
    def __get_pydantic_core_schema__(self, source: Any, handler: Any) -> Any:
        from pydantic_core import core_schema

        return core_schema.any_schema()


def probe_hasattr(obj: Any, name: str) -> bool:
    """``hasattr`` for isolated module bodies: an absent package has no optional attribute.

    Platform checks such as ``if hasattr(torch, "npu"):`` then take the branch a machine without
    the package would take, while plain attribute access (``torch.nn.Module``) stays permissive."""
    if type(obj) is Standin:
        return False
    return hasattr(obj, name)


_NO_DEFAULT = object()


def probe_getattr(obj: Any, name: str, default: Any = _NO_DEFAULT) -> Any:
    """``getattr`` for isolated module bodies: with a default, an absent package lacks ``name``."""
    if default is not _NO_DEFAULT:
        if type(obj) is Standin:
            return default
        return getattr(obj, name, default)
    if type(obj) is Standin and not isinstance(name, str):
        return Standin(f"{standin_name(obj)}.<{standin_name(name) if type(name) is Standin else name!r}>")
    return getattr(obj, name)


def _arith(self: Standin, *other: Any) -> Standin:
    return Standin(f"{object.__getattribute__(self, '_attn_lint_name')}(op)")


for _op in ("add", "sub", "mul", "matmul", "truediv", "floordiv", "mod", "pow", "lshift", "rshift", "and",
            "xor"):
    setattr(Standin, f"__{_op}__", _arith)
    setattr(Standin, f"__r{_op}__", _arith)
for _op in ("neg", "pos", "abs", "invert"):
    setattr(Standin, f"__{_op}__", _arith)


def is_standin(obj: Any) -> bool:
    return type(obj) is Standin


def standin_name(obj: Any) -> str:
    return object.__getattribute__(obj, "_attn_lint_name")


class PartialModule(types.ModuleType):
    """A real module that lacks some names a `from x import a, b` asks for: the missing ones are
    stand-ins (a newer API than the installed version, or a name only a GPU build exports)."""

    def __init__(self, real: types.ModuleType) -> None:
        super().__init__(real.__name__)
        object.__setattr__(self, "_attn_lint_real", real)

    def __getattr__(self, name: str) -> Any:
        real = object.__getattribute__(self, "_attn_lint_real")
        try:
            return getattr(real, name)
        except AttributeError:
            if name.startswith("__") and name.endswith("__"):
                raise
            return Standin(f"{real.__name__}.{name}")


# --------------------------------------------------------------------------------------------
# Signatures
# --------------------------------------------------------------------------------------------

def signature_from_params(params: tuple[Param, ...]) -> inspect.Signature:
    """An inspect.Signature rebuilt from the static summary (defaults are None: only their
    presence matters for binding)."""
    out = []
    for p in params:
        kind = inspect._ParameterKind(p.kind)  # the summary uses inspect's numbering
        default = None if p.has_default else _EMPTY
        out.append(inspect.Parameter(p.name, kind, default=default))
    return inspect.Signature(out)


class _Default:
    """Stands for a default value inside generated source (renders as a bare name)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


def function_with_signature(name: str, signature: inspect.Signature, body: Any, qualname: str) -> Any:
    """A plain function with exactly ``signature`` (compiled from generated source, so binding
    is Python's own and TypeErrors are worded as for the real function) whose body calls
    ``body(bound_arguments_dict)`` and returns its result."""
    if not name.isidentifier() or keyword.iskeyword(name):
        raise ValueError(f"{name!r} is not an identifier")
    namespace: dict[str, Any] = {"_attn_lint_body": body}
    params = []
    for i, p in enumerate(signature.parameters.values()):
        if p.default is not _EMPTY:
            namespace[f"_attn_lint_d{i}"] = p.default
            p = p.replace(default=_Default(f"_attn_lint_d{i}"))
        params.append(p.replace(annotation=_EMPTY))
    sig_src = str(inspect.Signature(params))
    names = [p.name for p in params]
    collect = ", ".join(f"{n!r}: {n}" for n in names)
    src = f"def {name}{sig_src}:\n    return _attn_lint_body({{{collect}}})\n"
    exec(compile(src, f"<attn-lint stand-in {qualname}>", "exec"), namespace)
    fn = namespace[name]
    fn.__qualname__ = qualname
    return fn


# --------------------------------------------------------------------------------------------
# Recording delegates
# --------------------------------------------------------------------------------------------

@dataclass
class CallLog:
    """What happened to a delegate's hook: attempts (before binding) and body runs (after)."""

    attempts: list[tuple[tuple, dict]] = field(default_factory=list)
    ran: list[dict] = field(default_factory=list)
    bind_errors: list[str] = field(default_factory=list)


class _Recorder:
    """Wraps a bound stand-in method: records the attempt, then calls it (binding happens there)."""

    def __init__(self, bound: Any, log: CallLog) -> None:
        self._bound = bound
        self._log = log
        self.__signature__ = inspect.signature(bound)
        self.__name__ = getattr(bound, "__name__", "hook")
        self.__qualname__ = getattr(bound, "__qualname__", self.__name__)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self._log.attempts.append((args, kwargs))
        n_ran = len(self._log.ran)
        try:
            return self._bound(*args, **kwargs)
        except TypeError as exc:
            if len(self._log.ran) == n_ran:  # the body never started: the call did not bind
                self._log.bind_errors.append(str(exc))
            raise


class _RecordingMethod:
    """A descriptor: instance access gives a _Recorder around the generated method."""

    def __init__(self, fn: Any, kind: str) -> None:
        self.fn = fn
        self.kind = kind  # method | staticmethod | classmethod

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if obj is None and self.kind == "method":
            return self.fn
        log = (obj if obj is not None else owner)._attn_lint_log
        if self.kind == "staticmethod":
            bound = self.fn
        elif self.kind == "classmethod":
            bound = types.MethodType(self.fn, owner if owner is not None else type(obj))
        else:
            bound = types.MethodType(self.fn, obj)
        return _Recorder(bound, log)


def _permissive_getattr(self: Any, name: str) -> Any:
    if name.startswith("__") and name.endswith("__"):
        raise AttributeError(name)
    return Standin(f"{type(self).__name__}.{name}")


def make_delegate(member: str, *, kind: str = "method", signature: inspect.Signature | None = None,
                  class_name: str = "StandinDelegate", value: Any = None, permissive: bool = False) -> Any:
    """A recording stand-in delegate that defines ``member``.

    ``kind``: "method" (default; ``signature`` includes ``self``; None means ``(self, *args,
    **kwargs)``), "staticmethod", "classmethod", "property" or "attribute" (``value`` or a
    permissive stand-in). The instance's ``_attn_lint_log`` is its CallLog. ``permissive``: any
    other attribute is a permissive stand-in (for methods that use the delegate for more than the
    hook); leave it off where a probe must see only the hook.
    """
    log = CallLog()
    ns: dict[str, Any] = {"__module__": "attn_lint.standin", "_attn_lint_log": log,
                          "_attn_lint_member": member}
    if kind in ("method", "staticmethod", "classmethod"):
        if signature is None:
            first = [] if kind == "staticmethod" else [
                inspect.Parameter("cls" if kind == "classmethod" else "self",
                                  inspect.Parameter.POSITIONAL_OR_KEYWORD)]
            signature = inspect.Signature(first + [
                inspect.Parameter("args", inspect.Parameter.VAR_POSITIONAL),
                inspect.Parameter("kwargs", inspect.Parameter.VAR_KEYWORD)])

        def body(bound: dict, _log: CallLog = log) -> Any:
            _log.ran.append(bound)
            return None

        fn = function_with_signature(member, signature, body, f"{class_name}.{member}")
        ns[member] = _RecordingMethod(fn, kind)
    elif kind == "property":
        def getter(self: Any, _log: CallLog = log) -> Any:
            _log.ran.append({"self": self})
            return value if value is not None else Standin(f"{class_name}.{member}")

        ns[member] = property(getter)
    if permissive:
        ns["__getattr__"] = _permissive_getattr
    cls = type(class_name, (), ns)
    inst = object.__new__(cls)
    if kind == "attribute":
        inst.__dict__[member] = value if value is not None else Standin(f"{class_name}.{member}")
    return inst


def delegate_log(delegate: Any) -> CallLog:
    return type(delegate)._attn_lint_log


class AnyItem:
    """A container whose every item (and only iteration element) is ``item``: stands for a list
    or dict of delegates (``self.attn_backend_list``, ``self.children[i]``)."""

    def __init__(self, item: Any) -> None:
        self._item = item

    def __getitem__(self, key: Any) -> Any:
        return self._item

    def __iter__(self):
        return iter((self._item,))

    def __len__(self) -> int:
        return 1

    def __bool__(self) -> bool:
        return True

    def values(self):
        return [self._item]

    def items(self):
        return [(0, self._item)]

    def get(self, key: Any, default: Any = None) -> Any:
        return self._item


class Namespace:
    """An attribute holder for an intermediate object on a receiver chain (``self.runner`` in
    ``self.runner.backend.hook(...)``): set attributes are what they were set to, any other
    attribute is a permissive stand-in."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return Standin(f"<namespace>.{name}")
