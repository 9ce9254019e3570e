"""astroid, asked only where the tree index cannot type a receiver, within a time bound.

Inference is far costlier than the index (it parses and infers whole modules), so the engine
asks only for probe receivers of hooks that a wrapper could hide, each call is cut off after a
per-call limit, and all calls together stop after a total budget.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from contextlib import contextmanager

from ..files.discover import import_root
from ..files.read_set import Reads, ReadSet
from ..findings import Evidence
from ..model.index import TreeIndex
from ..model.resolve import Resolution
from ..perfile.cache import content_hash


class _Timeout(Exception):
    pass


class _RefuseProjectCode:
    """A meta path finder that refuses to import anything found under the analysed project's roots.

    astroid imports a module where it cannot read one: a compiled extension with a standard
    library name (`audioop.*.so` in the project's root shadows the real one while the roots lead
    `sys.path`), and brains such as the one for `gi.repository` call `__import__`. Either would run
    the analysed repository's code during a plain lint. Inference only reads source, so every such
    import is refused here; astroid then treats the module as unknown."""

    def __init__(self, roots: list[str]):
        self.roots = [os.path.realpath(r) for r in roots]

    def find_spec(self, fullname, path=None, target=None):
        from importlib.machinery import PathFinder

        spec = PathFinder.find_spec(fullname, list(path) if path is not None else self.roots)
        places = [spec.origin] if spec is not None and spec.origin else []
        places += list(spec.submodule_search_locations or ()) if spec is not None else []
        for place in places:
            real = os.path.realpath(place)
            if any(real == r or real.startswith(r.rstrip(os.sep) + os.sep) for r in self.roots):
                raise ImportError(f"attn-lint never imports the analysed code ({fullname})", name=fullname)
        return None


@contextmanager
def _never_importing(roots: list[str]):
    """While astroid infers: no compiled extension is loaded (a stub stands in), and nothing under
    the project's roots is imported."""
    import astroid

    manager = astroid.MANAGER
    guard = _RefuseProjectCode(roots)
    sys.meta_path.insert(0, guard)
    manager._can_load_extension = _never  # an instance attribute shadows the method
    try:
        yield
    finally:
        del manager._can_load_extension
        try:
            sys.meta_path.remove(guard)
        except ValueError:
            pass


def _never(_modname: str) -> bool:
    return False


TIMED_OUT = object()  # no answer for lack of time: not remembered


def prepare() -> None:
    """Build astroid's model of the builtins now, outside any query's time. It is a one-off cost
    (about 0.14 s) that astroid pays on its first use; inside the first query it came out of that
    query's limit and the run's budget, which are meant for inference (on a slow machine it could
    use the whole limit, and astroid never answered)."""
    import astroid

    if "builtins" not in astroid.MANAGER.astroid_cache:
        astroid.MANAGER.bootstrap()
_roots_loaded: list[str] | None = None  # the import roots astroid's modules were found under


@contextmanager
def _time_limit(seconds: float):
    usable = (hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread())
    if not usable:
        yield
        return

    def _raise(signum, frame):
        raise _Timeout()

    previous = signal.signal(signal.SIGALRM, _raise)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


_seen_stamps: dict[str, tuple] = {}  # a file astroid parsed -> its stat when astroid first handed it out


def _stamp(path: str | None) -> tuple | None:
    try:
        st = os.stat(path) if path else None
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ctime_ns, st.st_ino) if st else None


def forget_modules(paths: set[str]) -> None:
    """Drop astroid's parsed copies of the files that changed or went away (those the run analyses,
    given in `paths`, and any other file astroid read, an installed package's or one outside the
    analysed paths, whose stat moved), and the inference caches that may hold answers derived
    from them. Nothing to do when astroid was never asked."""
    if "astroid" not in sys.modules:
        return
    moved = {p for p, st in _seen_stamps.items() if _stamp(p) != st}
    for p in moved:
        del _seen_stamps[p]
    paths = set(paths) | moved
    if not paths:
        return
    try:
        import astroid
        from astroid.context import _invalidate_cache
        from astroid.inference_tip import clear_inference_tip_cache
        from astroid.nodes._base_nodes import LookupMixIn
    except ImportError:  # another astroid layout: forget everything instead
        import astroid
        astroid.MANAGER.clear_cache()
        return
    # By file, not by name: astroid names a module it imported by its own search of sys.path,
    # which need not be the name the index gave the file.
    modules = astroid.MANAGER.astroid_cache
    for name in [n for n, m in modules.items() if getattr(m, "file", None) in paths]:
        del modules[name]
    astroid.MANAGER._mod_file_cache.clear()  # a new or removed file can change what a name imports
    clear_inference_tip_cache()
    _invalidate_cache()
    LookupMixIn.lookup.cache_clear()


@contextmanager
def _recording_modules(read: set, absent: set[str]):
    """Note every module file astroid's manager hands out while inside (from its cache too) in
    `read`, and every module name it could not find in `absent`. astroid's inference caches are
    emptied first: an answer served from them would hide the imports it was derived through."""
    from astroid.context import _invalidate_cache
    from astroid.exceptions import AstroidBuildingError
    from astroid.inference_tip import clear_inference_tip_cache
    from astroid.manager import AstroidManager

    _invalidate_cache()
    clear_inference_tip_cache()
    by_name, by_file = AstroidManager.ast_from_module_name, AstroidManager.ast_from_file

    def seen(module) -> None:
        read.add(module.file)
        if module.file and module.file not in _seen_stamps:
            _seen_stamps[module.file] = _stamp(module.file)

    def from_name(manager, modname, *args, **kwargs):
        try:
            module = by_name(manager, modname, *args, **kwargs)
        except AstroidBuildingError:
            absent.add(modname)
            raise
        seen(module)
        return module

    def from_file(manager, filepath, *args, **kwargs):
        module = by_file(manager, filepath, *args, **kwargs)
        seen(module)
        return module

    AstroidManager.ast_from_module_name, AstroidManager.ast_from_file = from_name, from_file
    try:
        yield
    finally:
        AstroidManager.ast_from_module_name, AstroidManager.ast_from_file = by_name, by_file


class AstroidBridge:
    def __init__(self, index: TreeIndex, per_call: float = 0.25, budget: float = 0.5,
                 memo: dict | None = None, digests: dict[str, str] | None = None):
        self.index = index
        # Answers from earlier runs of this project, keyed by the probing file's content digest and
        # position, each with what it read (read_set.py): most trees give astroid nothing to add,
        # and asking again on every run costs seconds.
        self.memo = memo if memo is not None else {}
        self.digests = digests or {}
        self.per_call = per_call
        self.budget = budget
        self.spent = 0.0
        self.calls = 0
        self.answers = 0
        self.timeouts = 0
        self.learned = 0  # answers new to the memo, or replacing out-of-date ones
        self._roots: list[str] | None = None
        self._reads: Reads | None = None
        self.used = ReadSet()  # what every answer this run used had read: the run's result depends on it

    def _import_roots(self) -> list[str]:
        if self._roots is None:
            self._roots = sorted({import_root(m.file) for m in self.index.modules.values()})
        return self._roots

    def infer(self, site, line: int, col: int, kind: str) -> Resolution | None:
        mod = self.index.modules.get(site.module)
        if mod is None:
            return None
        key = (self.digests.get(mod.file.path), line, col, kind)
        hit = self.memo.get(key) if key[0] is not None else None
        if hit is not None and self._still_valid(hit):
            quals = hit[0]
            self.used |= ReadSet(hit[1], hit[2])
        else:
            quals = self._ask(mod, line, col, key)
        if not quals:
            return None
        self.answers += 1
        note = f"astroid inferred the receiver as {', '.join(q.rsplit('.', 1)[-1] for q in quals)}"
        return Resolution(frozenset(quals), (Evidence(mod.file.display, line, note),), via="astroid")

    def _ask(self, mod, line: int, col: int, key: tuple) -> tuple | None:
        """Ask astroid now: the classes it found (maybe none), remembered; None when the run's
        budget ran out first."""
        answer = self._infer(mod, line, col)
        if answer is TIMED_OUT or answer is None:
            return None
        self._remember(key, answer)
        return answer[0]

    def _remember(self, key: tuple, answer: tuple) -> None:
        quals, reads = answer
        self.used |= reads
        if key[0] is not None:
            self.memo[key] = (quals, reads.files, reads.absent)
            self.learned += 1

    # An answer is used again only while everything astroid read for it is as it was.
    def _still_valid(self, hit) -> bool:
        if not (isinstance(hit, tuple) and len(hit) == 3):
            return False  # the memo of an older build: ask again
        return self.reads.holds(ReadSet(hit[1], hit[2]))

    @property
    def reads(self) -> Reads:
        if self._reads is None:
            self._reads = Reads(self._import_roots(), self.digests, content_hash)
        return self._reads

    def _infer(self, mod, line: int, col: int):
        """(the in-tree classes astroid infers for the receiver at (line, col), sorted; what that
        answer depends on: ((path, digest), ...) of the project files astroid read, and the
        project modules it did not find). The classes are () for none (also when the query used
        its whole per-call limit); TIMED_OUT when the run's budget ran out first (an answer not
        to remember)."""
        raw = self._raw_infer(mod.file.path, mod.name, line, col)
        if raw is TIMED_OUT or raw is None:
            return raw
        return self._resolved(raw, mod.name)

    def _resolved(self, raw: tuple, near: str) -> tuple:
        """_infer's answer from _raw_infer's: astroid's class names mapped to the tree's classes."""
        qnames, read, absent = raw
        found = {q for q in (self._map(n, near) for n in qnames) if q}
        return tuple(sorted(found)), self._dependencies(set(read), set(absent))

    def _raw_infer(self, path: str, modname: str, line: int, col: int):
        """(the qualified names astroid gives the receiver's classes, the files it read, the module
        names it did not find); names () when the query used its whole per-call limit; TIMED_OUT
        when the run's budget ran out first. Needs only the import roots, not the index: the
        child of astroid_aside.py runs it."""
        try:
            import astroid
            from astroid import nodes
        except ImportError:  # pragma: no cover - a declared dependency
            return None
        if self.spent >= self.budget:
            return TIMED_OUT
        global _roots_loaded
        if _roots_loaded != self._import_roots():
            # astroid caches modules by name for the life of the process: another project's
            # `serving.backends` must not answer for this one's.
            if _roots_loaded is not None:
                astroid.MANAGER.clear_cache()  # which builds the builtins again: before the clock
            _roots_loaded = self._import_roots()
        prepare()
        self.calls += 1
        start = time.perf_counter()
        old_path = list(sys.path)
        sys.path[:0] = [r for r in self._import_roots() if r not in sys.path]
        found: set[str] = set()
        limit = min(self.per_call, self.budget - self.spent)
        read: set[str] = set()
        absent: set[str] = set()
        try:
            with _time_limit(limit), _recording_modules(read, absent), _never_importing(self._import_roots()):
                tree = astroid.MANAGER.ast_from_file(path, modname=modname)
                target = _receiver_node(tree, line, col, nodes)
                if target is None:
                    return (), tuple(read), tuple(absent)
                for n, value in enumerate(target.infer()):
                    if n >= 8:
                        break
                    proxied = getattr(value, "_proxied", None)
                    if isinstance(value, astroid.Instance) and proxied is not None:
                        read.add(getattr(proxied.root(), "file", None))
                        found.add(proxied.qname())
        except _Timeout:
            self.timeouts += 1
            # A query that used its whole per-call limit is remembered as unanswered (asking again
            # on every run would cost that second every time); one cut short by the end of the
            # run's budget is asked again on a later run.
            return ((), tuple(read), tuple(absent)) if limit >= self.per_call else TIMED_OUT
        except Exception:  # astroid raises many kinds of inference errors; all mean "no answer"
            return (), tuple(read), tuple(absent)
        finally:
            sys.path[:] = old_path
            self.spent += time.perf_counter() - start
        return tuple(sorted(found)), tuple(read), tuple(absent)

    def _dependencies(self, read: set, absent: set[str]) -> ReadSet:
        return self.reads.record(read, absent)

    def _map(self, qname: str, near: str) -> str | None:
        if qname in self.index.classes:
            return qname
        module, _, name = qname.rpartition(".")
        found = self.index.find_module(module, near)  # within the asking module's project first
        if found and f"{found}.{name}" in self.index.classes:
            return f"{found}.{name}"
        return None


def _receiver_node(tree, line: int, col: int, nodes):
    for node in tree.nodes_of_class((nodes.Call, nodes.Attribute)):
        if node.lineno != line or node.col_offset != col:
            continue
        if isinstance(node, nodes.Call) and node.args:
            return node.args[0]
        if isinstance(node, nodes.Attribute):
            return node.expr
    return None
