"""The whole-tree passes (linter/model/passes.py): an ordered list, each pass handed only the layers it
names, all made earlier; no layer's module reaches a later layer's, so none can call back into a
model still being built."""

from __future__ import annotations

import dataclasses
import inspect

from conftest import FIXTURES
from test_import_cycles import imports_of, modules_of_project

from attn_lint.linter.app.engine import analyse
from attn_lint.linter.model import passes
from attn_lint.linter.model.passes import PASSES, Pass, check_order


def test_the_pass_list_is_sound():
    assert check_order() == []


def test_check_order_says_no():
    by_name = {p.makes: p for p in PASSES}
    late_read = tuple(dataclasses.replace(p, reads=(*p.reads, "families")) if p.makes == "calls" else p
                      for p in PASSES)
    assert any("calls reads families" in s for s in check_order(late_read))
    swapped = list(PASSES)
    i, j = swapped.index(by_name["calls"]), swapped.index(by_name["text"])
    swapped[i], swapped[j] = swapped[j], swapped[i]
    assert any("calls reads text" in s for s in check_order(tuple(swapped)))
    extra = tuple(dataclasses.replace(p, reads=p.reads[:-1]) if p.makes == "families" else p for p in PASSES)
    assert any(s.startswith("families: FamilyModel takes") for s in check_order(extra))
    assert any("made twice" in s for s in check_order((*PASSES, Pass("calls", ("index",), lambda index: 0, ""))))


def test_no_layer_reaches_a_later_one():
    project = modules_of_project()
    modules = [inspect.getmodule(p.make) for p in PASSES]
    for i, (p, mod) in enumerate(zip(PASSES, modules, strict=True)):
        if mod is passes:
            continue  # a maker written in passes.py itself (tree_facts, lower_bound_values)
        seen = imports_of(mod.__name__, project[mod.__name__], project)
        later = {m.__name__ for m in modules[i + 1:] if m is not mod and m is not passes}
        assert not seen & later, f"{p.makes} ({mod.__name__}) imports a later layer: {sorted(seen & later)}"


def test_rules_read_the_layers_the_passes_made_once():
    ctx = analyse([str(FIXTURES / "al002_delegation_typeerror")], keep_context=True).context
    tree = ctx.tree
    assert ctx.model is tree.families and ctx.index is tree.index and ctx.resolver is tree.resolver
    assert tree.families.passed_values is tree.passed_values and tree.families.calls is tree.calls
    assert tree.passed_values.registries is tree.registries is tree.built_values.registries
    assert tree.param_callers.calls is tree.calls and tree.calls.text is tree.text
    assert not tree.passed_values.partial and tree.built_values.partial
    assert ctx.member_calls is tree.calls.member_calls
