"""docs/rules/ is what the rules generate (linter/app/rule_pages.py): a page never drifts from the rule's
own doc and examples."""

from __future__ import annotations

from pathlib import Path

from attn_lint.linter.app import rule_pages
from attn_lint.rules import ALL_RULES

DOCS = Path(__file__).resolve().parent.parent / "docs" / "rules"


def test_the_pages_are_what_the_rules_generate():
    assert rule_pages.main(["--check", str(DOCS)]) == 0, "run: python -m attn_lint.linter.app.rule_pages docs/rules"


def test_a_page_carries_the_rules_examples(tmp_path):
    for rule in ALL_RULES:
        text = rule_pages.page(rule)
        assert rule.doc.strip().splitlines()[0] in text
        for example in (*rule.INVALID, *rule.VALID):
            for source in example.files.values():
                assert source.strip("\n") in text
    # and the check says no to an edited page
    for name, text in rule_pages.pages().items():
        (tmp_path / name).write_text(text)
    (tmp_path / "AL001.md").write_text(rule_pages.page(ALL_RULES[0]) + "edited by hand\n")
    assert rule_pages.main(["--check", str(tmp_path)]) == 1
