"""Load the user's real modules and classes, by import or, where import fails, in isolation.

``TreeLoader`` first imports a module the ordinary way (``importlib.import_module`` with the
tree's import root at the front of ``sys.path``). Serving code usually imports packages that a
CPU machine lacks (torch, triton, sgl_kernel...), so where that fails the module is loaded **in
isolation**: its real source is compiled and executed in a fresh module object whose
``__builtins__`` carry a wrapped ``__import__``:

* an import of a module of the analysed tree is loaded the same way, recursively, through a cache
  (so ``from .base_attn_backend import AttentionBackend`` gives the tree's real class);
* package folders above the tree's modules whose ``__init__.py`` is not part of the analysed tree
  get an empty package object (their code is not run), and a module under the tree's top-level
  package that was not analysed is a stand-in: only module bodies that the analysed tree defines run;
* any other import is attempted for real (the standard library, installed packages); if it fails,
  a permissive stand-in (``standins.Standin``) takes its place, and names a ``from x import a``
  asks for that an installed module lacks are stand-ins too;
* ``hasattr(x, name)`` and ``getattr(x, name, default)`` in those bodies answer "absent" when ``x``
  is a stand-in, so platform checks (``if hasattr(torch, "npu"):``) take the branch a machine
  without the package takes; plain attribute access stays permissive;
* ``atexit`` and ``signal`` are always stand-ins, so a module body cannot leave code to run later
  or take over signals.

Every load runs under a time limit (SIGALRM where available), with the module's prints and
warnings swallowed. ``TreeLoader`` is a context manager: on exit it restores ``sys.path`` and
removes from ``sys.modules`` every module of the tree's top-level packages that it added, so
trees with the same package names (tests, fixtures) do not see each other.
"""

from __future__ import annotations

import builtins
import contextlib
import importlib
import importlib.util
import io
import os
import signal
import sys
import threading
import time
import types
import warnings
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..linter.files.discover import SourceFile, import_root
from ..linter.findings import unlabelled
from .standins import PartialModule, Standin, probe_getattr, probe_hasattr

DEFAULT_MODULE_TIME_LIMIT = 20.0  # seconds per module load, nested loads included
ALWAYS_STANDIN = frozenset({"atexit", "signal"})
# Extra top-level packages that isolated bodies always get as stand-ins, even where installed
# (comma-separated), e.g. ATTN_LINT_VERIFY_STANDINS=torch,triton where a real package's import-time
# side effects get in the way. The ordinary import (the first attempt) is not affected.
STANDINS_ENV = "ATTN_LINT_VERIFY_STANDINS"


_STDLIB = frozenset(getattr(sys, "stdlib_module_names", ())) | {"__future__"}


def _always_standin() -> frozenset[str]:
    extra = {p.strip() for p in os.environ.get(STANDINS_ENV, "").split(",") if p.strip()}
    return ALWAYS_STANDIN | extra


class TreeLoadError(ImportError):
    """An in-tree import whose module could not be loaded; carries the innermost cause."""


def _where(exc: BaseException, path: str) -> str:
    """' (file.py:line)' for the innermost traceback frame in ``path``."""
    tb = exc.__traceback__
    line = None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == path:
            line = tb.tb_lineno
        tb = tb.tb_next
    return f" at {os.path.basename(path)}:{line}" if line else ""


class LoadTimeout(BaseException):
    """Raised by the alarm inside a module body that runs past its time limit.

    A BaseException so that a module's own `except Exception:` cannot swallow it."""


@dataclass
class LoadedModule:
    name: str
    module: types.ModuleType | None
    # import | isolated | isolated-partial (the body stopped early) | isolated-strict[-partial]
    # (strict=True: every non-stdlib package a stand-in) | package | failed
    mode: str
    error: str | None = None  # isolated: why the import failed; failed: why loading failed
    seconds: float = 0.0
    standins: list[str] = field(default_factory=list)  # imports replaced by stand-ins (isolated)


@dataclass
class LoadedClass:
    qual: str
    cls: type | None
    mode: str  # the module's mode, or "failed"
    module: LoadedModule | None
    error: str | None = None


def one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}".rstrip(": ")


class _Deadlines:
    """Nested time limits on one SIGALRM timer (main thread only; elsewhere no limit)."""

    def __init__(self) -> None:
        self.stack: list[float] = []
        self.enabled = hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
        self._old_handler: Any = None

    def _arm(self) -> None:
        if not self.enabled:
            return
        if self.stack:
            remaining = max(self.stack[-1] - time.monotonic(), 0.001)
            signal.setitimer(signal.ITIMER_REAL, remaining)
        else:
            signal.setitimer(signal.ITIMER_REAL, 0)

    @contextlib.contextmanager
    def limit(self, seconds: float):
        if not self.enabled:
            yield
            return
        if not self.stack:
            self._old_handler = signal.signal(signal.SIGALRM, self._fire)
        deadline = time.monotonic() + seconds
        self.stack.append(min(deadline, self.stack[-1]) if self.stack else deadline)
        self._arm()
        try:
            yield
        finally:
            self.stack.pop()
            self._arm()
            if not self.stack:
                signal.signal(signal.SIGALRM, self._old_handler or signal.SIG_DFL)

    @staticmethod
    def _fire(signum, frame) -> None:
        raise LoadTimeout("time limit reached")


@contextlib.contextmanager
def silenced():
    """Module bodies may print, warn or log at import: keep that out of the report."""
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()), \
            contextlib.redirect_stderr(io.StringIO()):
        warnings.simplefilter("ignore")
        yield


# Compiled ahead by the process that forks the checks (compiling runs none of the code): each
# finding is checked in a process of its own, which would otherwise compile again every module
# it loads (on sglang, two thirds of a check's time). path -> (the file's stat, its code).
_PRECOMPILED: dict[str, tuple[tuple[int, int], types.CodeType]] = {}
PRECOMPILE_MAX_BYTES = 1 << 20  # larger files are compiled by the check that loads them


def _stat_key(path: str) -> tuple[int, int]:
    st = os.stat(path)
    return st.st_size, st.st_mtime_ns


def precompile(files: Iterable[SourceFile]) -> None:
    """Compile the tree's modules now, in the process that will fork the checks."""
    for f in files:
        if f.path in _PRECOMPILED:
            continue
        try:
            key = _stat_key(f.path)
            if key[0] > PRECOMPILE_MAX_BYTES:
                continue
            with open(f.path, "rb") as fh:
                code = compile(fh.read(), f.path, "exec", dont_inherit=True)
            _PRECOMPILED[f.path] = (key, code)
        except (Exception, RecursionError, MemoryError):
            continue  # the check that loads it compiles it and says why it failed


def _compiled(path: str) -> types.CodeType:
    kept = _PRECOMPILED.get(path)
    if kept is not None and kept[0] == _stat_key(path):
        return kept[1]
    with open(path, "rb") as fh:
        return compile(fh.read(), path, "exec", dont_inherit=True)


class TreeLoader:
    """Loads the analysed tree's modules and classes; use as a context manager."""

    def __init__(self, files: Iterable[SourceFile], time_limit: float = DEFAULT_MODULE_TIME_LIMIT,
                 try_import: bool = True, strict: bool = False) -> None:
        """``strict``: no ordinary import, and isolated bodies get stand-ins for every package that
        is not in the standard library (installed or not): the second attempt for classes whose
        loading fails with the real packages present (import-time side effects of torch, triton...).
        ``files`` must not hold two projects with the same module names (verify._batch groups findings by project)."""
        self.files: dict[str, SourceFile] = {}
        for f in files:
            self.files.setdefault(f.module, f)
        self.roots: list[str] = []
        for f in self.files.values():
            r = import_root(f)
            if r not in self.roots:
                self.roots.append(r)
        self.packages: dict[str, str] = {}  # package name -> folder, for every package above a module
        for name, f in self.files.items():
            parts = name.split(".")
            folder = os.path.dirname(os.path.abspath(f.path))
            is_init = os.path.basename(f.path).startswith("__init__.")
            if is_init:
                self.packages[name] = folder
            for i in range(len(parts) - 1, 0, -1):
                if not is_init:
                    self.packages.setdefault(".".join(parts[:i]), folder)
                    folder = os.path.dirname(folder)
                else:
                    folder = os.path.dirname(folder)
                    self.packages.setdefault(".".join(parts[:i]), folder)
        self.top_names = {n.split(".")[0] for n in self.files} | {n.split(".")[0] for n in self.packages}
        self.time_limit = time_limit
        self.strict = strict
        self.try_import = try_import and not strict
        self.cache: dict[str, LoadedModule] = {}
        self._loading: set[str] = set()
        self._real_failed: dict[str, str] = {}  # module -> why the ordinary import failed
        self._deadlines = _Deadlines()
        self._saved_path: list[str] | None = None
        self._saved_modules: set[str] | None = None
        self._shadowed: dict[str, types.ModuleType] = {}

    # --- session ---------------------------------------------------------------------------
    def __enter__(self) -> TreeLoader:
        self._saved_path = list(sys.path)
        for r in reversed(self.roots):
            sys.path.insert(0, r)
        # Modules already imported under the tree's top-level names (another tree, an earlier
        # run) would answer instead of this tree's: set them aside for the session.
        for name in list(sys.modules):
            if name.split(".")[0] in self.top_names:
                self._shadowed[name] = sys.modules.pop(name)
        self._saved_modules = set(sys.modules)
        importlib.invalidate_caches()
        return self

    def __exit__(self, *exc: Any) -> None:
        for name in list(sys.modules):
            if name not in self._saved_modules and name.split(".")[0] in self.top_names:
                del sys.modules[name]
        sys.modules.update(self._shadowed)
        if self._saved_path is not None:
            sys.path[:] = self._saved_path
        importlib.invalidate_caches()

    # --- classes ---------------------------------------------------------------------------
    def load_class(self, qual: str, module: str) -> LoadedClass:
        """The real class ``qual`` defined in ``module`` (nested classes: ``Outer.Inner``)."""
        qual, module = unlabelled(qual), unlabelled(module)
        lm = self.load(module)
        if lm.module is None:
            return LoadedClass(qual, None, "failed", lm, lm.error)
        obj: Any = lm.module
        rest = qual[len(module) + 1:] if qual.startswith(module + ".") else qual.rsplit(".", 1)[-1]
        for part in rest.split("."):
            obj = getattr(obj, part, None) if not isinstance(obj, Standin) else None
            if obj is None:
                break
        if not isinstance(obj, type):
            if lm.mode.endswith("-partial"):
                why = f"`{rest}` was never defined: {lm.error}"
            else:
                why = (f"`{rest}` is not defined in {module} after loading it ({lm.mode}); "
                       f"it may be defined under a condition the loaded body did not take")
            return LoadedClass(qual, None, "failed", lm, why)
        return LoadedClass(qual, obj, lm.mode, lm)

    # --- modules ---------------------------------------------------------------------------
    def in_tree(self, name: str) -> bool:
        return name in self.files or name in self.packages

    def load(self, name: str) -> LoadedModule:
        if name in self.cache:
            return self.cache[name]
        start = time.perf_counter()
        lm = None
        if self.try_import:
            lm = self._import_real(name)
        if lm is None:
            lm = self._load_isolated(name)
        lm.seconds = time.perf_counter() - start
        self.cache[name] = lm
        return lm

    def _matches(self, mod: types.ModuleType, name: str) -> bool:
        f = self.files.get(name)
        if f is None:
            return True
        mfile = getattr(mod, "__file__", None)
        return bool(mfile) and os.path.realpath(mfile) == os.path.realpath(f.path)

    def _import_real(self, name: str) -> LoadedModule | None:
        """The ordinary import, or None when it fails (the reason is kept for the report)."""
        parts = name.split(".")
        for i in range(1, len(parts) + 1):
            prefix = ".".join(parts[:i])
            if prefix in self._real_failed:
                self._real_failed.setdefault(name, self._real_failed[prefix])
                return None
        existing = sys.modules.get(name)
        if existing is not None and name not in self._loading and self._matches(existing, name) \
                and not getattr(existing, "__attn_lint_isolated__", False):
            return LoadedModule(name, existing, "import")
        try:
            with silenced(), self._deadlines.limit(self.time_limit):
                mod = importlib.import_module(name)
        except KeyboardInterrupt:
            raise
        except BaseException as exc:
            why = one_line(exc)
            if isinstance(exc, ModuleNotFoundError) and exc.name and not self.in_tree(exc.name):
                why = f"No module named '{exc.name}'"
            self._real_failed[name] = why
            # A failing package fails every import beneath it: remember the topmost that fails.
            for i in range(1, len(parts)):
                prefix = ".".join(parts[:i])
                if prefix not in sys.modules:
                    self._real_failed.setdefault(prefix, why)
                    break
            return None
        if not self._matches(mod, name) or getattr(mod, "__attn_lint_isolated__", False):
            self._real_failed[name] = f"`import {name}` found {getattr(mod, '__file__', None)}, not the tree's file"
            return None
        return LoadedModule(name, mod, "import")

    def _package_module(self, name: str) -> LoadedModule:
        """A package object for a folder above the tree's modules whose __init__ is not analysed."""
        mod = types.ModuleType(name)
        mod.__path__ = [self.packages[name]]
        mod.__package__ = name
        mod.__attn_lint_isolated__ = True
        mod.__spec__ = importlib.machinery.ModuleSpec(name, None, is_package=True)
        mod.__spec__.submodule_search_locations = [self.packages[name]]
        sys.modules[name] = mod
        self._link_parent(name, mod)
        return LoadedModule(name, mod, "package")

    def _link_parent(self, name: str, mod: types.ModuleType) -> None:
        parent, _, last = name.rpartition(".")
        if parent:
            pm = self.cache.get(parent)
            if pm is not None and pm.module is not None:
                try:
                    setattr(pm.module, last, mod)
                except Exception:
                    pass

    def _load_isolated(self, name: str) -> LoadedModule:
        parent = name.rpartition(".")[0]
        if parent:
            self.load(parent)
        f = self.files.get(name)
        if f is None:
            if name in self.packages:
                return self._package_module(name)
            return LoadedModule(name, None, "failed", f"{name} is not part of the analysed tree")
        why_not_import = self._real_failed.get(name)
        try:
            code = _compiled(f.path)
        except Exception as exc:
            return LoadedModule(name, None, "failed", f"cannot compile {f.display}: {one_line(exc)}")
        is_pkg = os.path.basename(f.path).startswith("__init__.")
        mod = types.ModuleType(name)
        mod.__file__ = f.path
        mod.__package__ = name if is_pkg else parent
        if is_pkg:
            mod.__path__ = [os.path.dirname(f.path)]
        mod.__spec__ = importlib.util.spec_from_file_location(
            name, f.path, submodule_search_locations=mod.__path__ if is_pkg else None)
        mod.__loader__ = None
        mod.__attn_lint_isolated__ = True
        standins: list[str] = []
        b = dict(builtins.__dict__)
        b["__import__"] = self._make_import(standins)
        b["hasattr"] = probe_hasattr
        b["getattr"] = probe_getattr
        mod.__builtins__ = b
        previous = sys.modules.get(name)
        sys.modules[name] = mod
        lm = LoadedModule(name, mod, "isolated-strict" if self.strict else "isolated", why_not_import,
                          standins=standins)
        self.cache[name] = lm  # visible to circular imports while the body runs
        self._loading.add(name)
        try:
            with silenced(), self._deadlines.limit(self.time_limit):
                exec(code, mod.__dict__)
        except KeyboardInterrupt:
            raise
        except BaseException as exc:
            if isinstance(exc, TreeLoadError):
                error = str(exc)  # the innermost failing module says why
            else:
                what = "ran past the time limit" if isinstance(exc, LoadTimeout) else f"raised {one_line(exc)}"
                error = (f"{name} failed in isolation: its body {what}{_where(exc, f.path)}"
                         + (f" (ordinary import: {why_not_import})" if why_not_import else ""))
            if isinstance(exc, LoadTimeout):
                del self.cache[name]
                if previous is not None:
                    sys.modules[name] = previous
                else:
                    sys.modules.pop(name, None)
                return LoadedModule(name, None, "failed", error, standins=standins)
            # Keep what the body defined before it stopped: the classes above the failing line
            # are the real ones. Importers see stand-ins for the names it never reached, and
            # scenarios check that every in-tree base of a class they use is real.
            lm.mode = "isolated-strict-partial" if self.strict else "isolated-partial"
            lm.error = error
            self._link_parent(name, mod)
            return lm
        finally:
            self._loading.discard(name)
        self._link_parent(name, mod)
        return lm

    # --- the wrapped __import__ ------------------------------------------------------------
    def _make_import(self, standins: list[str]):
        real_import = builtins.__import__
        always = _always_standin()

        def _import(name: str, globals: dict | None = None, locals: dict | None = None,
                    fromlist: tuple | list | None = (), level: int = 0) -> Any:
            if level:
                package = (globals or {}).get("__package__") or ""
                try:
                    absname = importlib.util.resolve_name("." * level + name, package)
                except (ImportError, ValueError):
                    absname = name
            else:
                absname = name
            top = absname.split(".")[0]
            if top in always:
                standins.append(absname)
                return Standin(absname if fromlist else top)
            if self.in_tree(absname):
                return self._tree_import(absname, fromlist, standins)
            if top in self.top_names or (self.strict and top not in _STDLIB):
                # Under the tree's packages but not analysed: do not run it (strict mode: nothing
                # outside the standard library runs either).
                standins.append(absname)
                return Standin(absname if fromlist else top)
            try:
                mod = real_import(absname, globals, locals, fromlist, 0)
            except KeyboardInterrupt:
                raise
            except BaseException:
                standins.append(absname)
                return Standin(absname if fromlist else top)
            if fromlist:
                missing = [n for n in fromlist if n != "*" and not hasattr(mod, n)]
                if missing:
                    standins.extend(f"{absname}.{n}" for n in missing)
                    return PartialModule(mod)
            return mod

        return _import

    def _tree_import(self, absname: str, fromlist: Any, standins: list[str]) -> Any:
        lm = self.load(absname)
        if lm.module is None:
            raise TreeLoadError(lm.error or f"cannot load {absname}", name=absname)
        mod = lm.module
        if fromlist:
            missing = []
            for item in fromlist:
                if item == "*" or hasattr(mod, item):
                    continue
                sub = f"{absname}.{item}"
                if self.in_tree(sub):
                    sl = self.load(sub)
                    if sl.module is not None:
                        try:
                            setattr(mod, item, sl.module)
                        except Exception:
                            pass
                        continue
                missing.append(item)
            if missing or lm.mode.endswith("-partial") or absname in self._loading:
                # A name the module defines only under a condition the isolated body did not
                # take, a body that stopped early, or one still running (a circular import):
                # the names it lacks are stand-ins rather than an ImportError for the importer.
                standins.extend(f"{absname}.{n}" for n in missing)
                return PartialModule(mod)
            return mod
        # `import a.b.c` binds `a`, with each level reachable as an attribute.
        parts = absname.split(".")
        for i in range(2, len(parts) + 1):
            sub = self.cache.get(".".join(parts[:i]))
            if sub is not None and sub.module is not None:
                self._link_parent(sub.name, sub.module)
        tl = self.cache.get(parts[0])
        return tl.module if tl is not None and tl.module is not None else mod
