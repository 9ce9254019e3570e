"""The whole-tree passes, in the order they run.

Once every module is summarised and indexed (engine.py), each pass below makes one layer of the
tree's model from the layers it names, and only from those: a layer is handed finished layers
and never a model still being built, so none can call back into one that needs it. The rules
then read the finished model through the Context (context.py).

A layer answers questions (`calls.init_calls(cls)`, `passed_values.attribute_values(cls, attr)`) and keeps
each answer for the rest of the run; what no rule asks is never computed, which keeps a tree
without a single family as cheap as its parse.

    index ─┬─ facts ─────────────┐
           ├─ resolver           │
           └─ value_uses         │
    text (index, facts)          │
    calls (index, resolver, facts, value_uses, text)
    registries (index, facts, value_uses, text, calls)
    passed_values, built_values (index, resolver, value_uses, text, calls, registries)
    families (index, resolver, facts, calls, passed_values)
    param_callers (index, resolver, calls, text)
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, fields

from .callgraph import CallGraph
from .facts import ModuleFacts, facts_of
from .families import FamilyModel
from .function_text import FunctionText
from .index import TreeIndex
from .param_callers import ParamCallers
from .passed_values import PassedValues
from .registries import Registries
from .resolve import Resolver
from .value_uses import ValueUses


@dataclass(frozen=True, slots=True)
class Pass:
    makes: str  # the TreeModel field it fills
    reads: tuple[str, ...]  # the fields it is handed, in the order its maker takes them
    make: Callable[..., object]
    what: str  # what the layer is, in a line (the list reads as the engine's table of contents)


def tree_facts(index: TreeIndex) -> dict[str, ModuleFacts]:
    """Module name -> what the later passes and the rules read from that module (facts.py)."""
    return {mod.name: facts_of(mod.name, mod.file.display, mod.summary) for mod in index.modules.values()}


def lower_bound_values(index: TreeIndex, resolver: Resolver, value_uses: ValueUses, text: FunctionText,
                       calls: CallGraph, registries: Registries) -> PassedValues:
    return PassedValues(index, resolver, value_uses, text, calls, registries, partial=True)


_VALUES = ("index", "resolver", "value_uses", "text", "calls", "registries")

PASSES: tuple[Pass, ...] = (
    Pass("facts", ("index",), tree_facts,
         "per module: probes, member calls, constructions, calls on `self` attributes"),
    Pass("resolver", ("index",), Resolver, "the static types of names, attributes and calls"),
    Pass("value_uses", ("index",), ValueUses, "functions and methods used as values, and who imports a name"),
    Pass("text", ("index", "facts"), FunctionText,
         "a function's own text, read again where its summary keeps too little"),
    Pass("calls", ("index", "resolver", "facts", "value_uses", "text"), CallGraph,
         "who calls and builds what: member calls, constructions, the calls running an `__init__`"),
    Pass("registries", ("index", "facts", "value_uses", "text", "calls"), Registries,
         "module-level tables of classes and factories, and what is put into them"),
    Pass("passed_values", _VALUES, PassedValues,
         "what an attribute built from constructor parameters holds, from every call that builds it"),
    Pass("built_values", _VALUES, lower_bound_values,
         "the same, as a lower bound: what the paths the tree shows build"),
    Pass("families", ("index", "resolver", "facts", "calls", "passed_values"), FamilyModel,
         "class families, wrappers and the delegates they hold"),
    Pass("param_callers", ("index", "resolver", "calls", "text"), ParamCallers,
         "an unannotated parameter typed from the calls that pass it"),
)


@dataclass(frozen=True, slots=True)
class TreeModel:
    """Every layer the passes make, each once per tree."""

    index: TreeIndex
    facts: dict[str, ModuleFacts]
    resolver: Resolver
    value_uses: ValueUses
    text: FunctionText
    calls: CallGraph
    registries: Registries
    passed_values: PassedValues
    built_values: PassedValues
    families: FamilyModel
    param_callers: ParamCallers


def run_passes(index: TreeIndex) -> TreeModel:
    made: dict[str, object] = {"index": index}
    for p in PASSES:
        made[p.makes] = p.make(*(made[name] for name in p.reads))
    return TreeModel(**made)


def check_order(passes: tuple[Pass, ...] = PASSES) -> list[str]:
    """What is wrong with a pass list: a pass reading a layer no earlier pass makes, two passes
    making one layer, a maker taking other parameters than the layers named, a layer TreeModel
    lacks. Empty when the list is sound (tests/test_passes.py)."""
    problems: list[str] = []
    made = {"index"}
    for p in passes:
        for name in p.reads:
            if name not in made:
                problems.append(f"{p.makes} reads {name}, which no earlier pass makes")
        if p.makes in made:
            problems.append(f"{p.makes} is made twice")
        made.add(p.makes)
        params = [q.name for q in inspect.signature(p.make).parameters.values()
                  if q.default is inspect.Parameter.empty]
        if params != list(p.reads):
            maker = getattr(p.make, "__name__", p.make)
            problems.append(f"{p.makes}: {maker} takes {params}, the pass names {list(p.reads)}")
    missing = {f.name for f in fields(TreeModel)} ^ made
    if missing:
        problems.append(f"TreeModel and the passes disagree on {sorted(missing)}")
    return problems
