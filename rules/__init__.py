"""The rules, one module each (`alNNN_<name>.py`, one Rule subclass in it), found by their file
names: adding a rule is adding its module. Codes are stable: a retired code is never reused."""

from __future__ import annotations

import importlib
import pkgutil
import re

from .base import Example, Reach, Rule, RuntimeCheck, SuppressionRule

_MODULE = re.compile(r"al\d{3}_\w+")


def _discover() -> tuple[Rule, ...]:
    found = []
    for info in pkgutil.iter_modules(__path__):
        if not _MODULE.fullmatch(info.name):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        classes = [c for c in vars(module).values()
                   if isinstance(c, type) and issubclass(c, Rule) and c.__module__ == module.__name__]
        if len(classes) != 1:
            raise ImportError(f"rules/{info.name}.py must define exactly one Rule subclass, not {len(classes)}")
        found.append(classes[0]())
    rules = tuple(sorted(found, key=lambda r: r.code))
    codes = [r.code for r in rules]
    if len(set(codes)) != len(codes):
        raise ImportError(f"two rules share a code: {codes}")
    return rules


ALL_RULES: tuple[Rule, ...] = _discover()
RULES_BY_CODE = {r.code: r for r in ALL_RULES}
# The rules the engine runs over the tree model; the others read what the run's findings left
# (base.Rule.phase).
TREE_RULES: tuple[Rule, ...] = tuple(r for r in ALL_RULES if r.phase == "tree")
SUPPRESSION_RULES: tuple[SuppressionRule, ...] = tuple(r for r in ALL_RULES if isinstance(r, SuppressionRule))

__all__ = ["ALL_RULES", "RULES_BY_CODE", "SUPPRESSION_RULES", "TREE_RULES", "Example", "Reach", "Rule",
           "RuntimeCheck", "SuppressionRule"]
