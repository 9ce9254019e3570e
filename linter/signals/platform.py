"""platform: code that runs only on one platform never meets another platform's implementations.

Serving code keeps platform-only code apart by convention (linter/perfile/platforms.py lists the words):
a package folder or module named for the platform (`hardware_backend/npu/`, `dsa_npu_indexer.py`),
a class or function named for it (`AscendAttnBackend`, `forward_npu`), a predicate test
dominating the code (`if is_npu():`, `if not _is_hip: return`), or an import, under no `if` or
`try`, of a kernel package named for it (`import torch_npu`) or of a tree module that has one.

Each side of a pairing gets a platform fact, "only on these platforms" or "never on these", or
none when the code says nothing:

* the site: its module, class and function, and the platform tests holding at its line;
* the implementation: its module and name, and those of its in-tree bases;
* the wrapper (the class holding the receiver): itself and every subclass, since a subclass the
  rule folds into the wrapper's finding may be the object at the site.

A pairing is ruled out when two known facts are disjoint: the site runs only where the
implementation or the wrapper never exists, or the wrapper never exists where the
implementation does. A side with no fact never rules anything out.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..findings import Reason, short
from ..model.confidence import Pairing, Signal
from ..perfile.platforms import camel_platforms, import_platforms, module_platforms, snake_platforms

if TYPE_CHECKING:
    from ..model.context import Context

# A fact is None (unknown: any platform) or (platforms, negated): "only on these" / "never on these".
Fact = "tuple[frozenset[str], bool] | None"


class PlatformSignal(Signal):
    name = "platform"
    doc = ("Rules out a pairing when the probe site, the wrapper or the implementation is platform-only "
           "code (a folder, module, class or function named for a platform, a dominating `is_npu()`-style "
           "test, a platform kernel import) and the platforms of two of them cannot meet.")

    def rule_out(self, ctx: Context, p: Pairing) -> Reason | None:
        state = ctx.state(_Platforms, lambda: _Platforms(ctx))
        index = ctx.index
        impl = state.of_class(p.impl) if p.impl in index.classes else None
        wrapper = state.of_wrapper(p.wrapper) if p.wrapper in index.classes else None
        site, why = state.of_site(p.site, p.line)
        if site is not None:
            for other, role, qual in ((impl, "implementation", p.impl), (wrapper, "wrapper", p.wrapper)):
                if other is not None and disjoint(site, other):
                    return Reason(self.name, "lower", p.site.path, p.line,
                                  f"`{p.site.where}` runs only {describe(site)} ({why}); the {role} "
                                  f"`{short(qual)}` exists only {describe(other)}")
        if impl is not None and wrapper is not None and disjoint(wrapper, impl):
            entry = index.classes[p.impl]
            return Reason(self.name, "lower", entry.file.display, entry.info.line,
                          f"`{short(p.impl)}` exists only {describe(impl)}; the wrapper `{short(p.wrapper)}` "
                          f"(and every subclass) only {describe(wrapper)}, so it never holds it")
        return None


def disjoint(a, b) -> bool:
    (sa, na), (sb, nb) = a, b
    if na and nb:
        return False
    if na:
        return sb <= sa
    if nb:
        return sa <= sb
    return not (sa & sb)


def describe(fact) -> str:
    words, negated = fact
    return f"{'off' if negated else 'on'} {'/'.join(sorted(words))}"


def meet(facts) -> tuple | None:
    """What holds where every fact holds; None when nothing is known (or they contradict)."""
    only, never = None, set()
    for fact in facts:
        if fact is None:
            continue
        words, negated = fact
        if negated:
            never |= words
        else:
            only = set(words) if only is None else only & words
    if only is not None:
        only -= never
        return (frozenset(only), False) if only else None
    return (frozenset(never), True) if never else None


def join(a, b) -> tuple | None:
    """What holds where either fact holds (an object of one class or another)."""
    if a is None or b is None:
        return None
    (sa, na), (sb, nb) = a, b
    if not na and not nb:
        return (sa | sb, False)
    if na and nb:
        rest = sa & sb
    else:
        rest = (sa - sb) if na else (sb - sa)
    return (frozenset(rest), True) if rest else None


def _named(words: set[str]):
    return (frozenset(words), False) if words else None


class _Platforms:
    """Per-run memo of the platform facts of modules, classes and wrappers."""

    def __init__(self, ctx: Context):
        self.index = ctx.index
        self._modules: dict[str, tuple | None] = {}
        self._imported: dict[str, tuple | None] = {}
        self._classes: dict[str, tuple | None] = {}
        self._wrappers: dict[str, tuple | None] = {}

    def of_module(self, module: str) -> tuple | None:
        """A module's platform: its path's names and what it imports unguarded."""
        if module not in self._modules:
            self._modules[module] = meet([_named(module_platforms(module.split(":", 1)[-1])),
                                          self._imports(module, 0)])
        return self._modules[module]

    def _imports(self, module: str, depth: int) -> tuple | None:
        """The platform a module's unguarded imports need: kernel packages named for a platform,
        and (through their own imports) tree modules. A tree module merely named for a platform
        may be imported everywhere: it guards its kernels itself."""
        if module in self._imported:
            return self._imported[module]
        self._imported[module] = None  # cycle guard
        mod = self.index.modules.get(module)
        facts = []
        if mod is not None and depth < 8:
            summary = mod.summary
            for i in summary.unguarded_imports:
                imp = summary.imports[i]
                target = self.index._absolute(module, imp.module, imp.level) if imp.level else imp.module
                inner = self.index.find_module(target, module) if target else None
                if inner is None and imp.level == 0:
                    facts.append(_named(import_platforms(imp.module)))
                elif inner is not None and inner != module:
                    facts.append(self._imports(inner, depth + 1))
        out = self._imported[module] = meet(facts)
        return out

    def of_class(self, qual: str) -> tuple | None:
        if qual in self._classes:
            return self._classes[qual]
        facts = []
        for q in self.index.mro(qual):
            entry = self.index.classes.get(q)
            if entry is not None:
                facts.append(self.of_module(entry.module))
                facts.append(_named(camel_platforms(entry.info.name.rsplit(".", 1)[-1])))
        out = self._classes[qual] = meet(facts)
        return out

    def of_wrapper(self, qual: str) -> tuple | None:
        if qual in self._wrappers:
            return self._wrappers[qual]
        out = self.of_class(qual)
        for d in self.index.descendants(qual):
            if out is None:
                break
            out = join(out, self.of_class(d))
        self._wrappers[qual] = out
        return out

    def of_site(self, site, line: int) -> tuple[tuple | None, str]:
        facts, why = [], []
        module = self.of_module(site.module)
        if module is not None:
            facts.append(module)
            why.append(f"module `{site.module.split(':', 1)[-1]}`")
        if site.cls:
            named = _named(camel_platforms(site.cls.rsplit(".", 1)[-1]))
            if named:
                facts.append(named)
                why.append(f"class `{short(site.cls)}`")
        if site.fn.name != "<module>":
            named = _named(snake_platforms(site.fn.name))
            if named:
                facts.append(named)
                why.append(f"function `{site.fn.name}`")
        for first, last, words, negated in site.fn.platform_gates:
            if first <= line <= last:
                facts.append((frozenset(words), negated))
                why.append(f"a platform test holding at lines {first}-{last}")
        return meet(facts), ", ".join(why)
