"""CONTRIBUTING's worked example of a new rule (examples/add_a_rule/) builds and works: it would
be discovered if dropped into `rules/`, its INVALID examples give exactly their findings, its VALID
ones none while still reaching their case, and the reach check says no once the member is
renamed away. It is run by calling the rule on a built context, the way the engine does."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest
from conftest import write_tree

from attn_lint.linter.app.engine import Settings, analyse
from attn_lint.rules import Rule

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "add_a_rule" / "al990_dead_probe.py"


def _rule() -> Rule:
    spec = importlib.util.spec_from_file_location("al990_dead_probe", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # as an import would (its dataclasses read their module)
    spec.loader.exec_module(module)
    classes = [c for c in vars(module).values()
               if isinstance(c, type) and issubclass(c, Rule) and c is not Rule and c.__module__ == module.__name__]
    assert len(classes) == 1, "rules/ discovery takes exactly one Rule subclass per module"
    return classes[0]()


def _run(rule: Rule, files: dict[str, str], root: Path):
    ctx = analyse([str(write_tree(root, files))], Settings(cache_dir=None, jobs=1), keep_context=True).context
    return ctx, list(rule.check(ctx))


def test_the_example_would_be_discovered():
    assert re.fullmatch(r"al\d{3}_\w+", EXAMPLE.stem)
    rule = _rule()
    assert (rule.code, rule.name) == ("AL990", "dead-probe")
    for part in ("## What it finds", "## Why it is bad", "## Example", "## How to fix"):
        assert part in rule.doc


@pytest.mark.parametrize("i", range(len(_rule().INVALID)))
def test_invalid_examples_give_their_findings(i, tmp_path):
    rule = _rule()
    example = rule.INVALID[i]
    _, found = _run(rule, example.files, tmp_path)
    assert sorted((f.class_name.rsplit(".", 1)[-1], f.member) for f in found) == sorted(example.expect)
    assert all(f.confidence in ("high", "medium") and f.evidence for f in found)


@pytest.mark.parametrize("i", range(len(_rule().VALID)))
def test_valid_examples_give_none_and_reach_their_case(i, tmp_path):
    rule = _rule()
    example = rule.VALID[i]
    ctx, found = _run(rule, example.files, tmp_path)
    assert found == []
    reach = example.reaches
    (qual,) = [q for q in ctx.index.classes if q.rsplit(".", 1)[-1] == reach.cls]
    assert rule.reaches(ctx, qual, reach.member)
    assert not rule.reaches(ctx, qual, reach.member + "_renamed_away")
