"""How a rule assembles a finding's evidence (rules/base.py): each link once, where it first
appears, and part of the chain (not supporting) when any copy of it is."""

from __future__ import annotations

from attn_lint.linter.findings import Evidence
from attn_lint.rules.al001_unforwarded_hook import UnforwardedHook

SITE = Evidence("m.py", 10, "the probe")
HELD = Evidence("w.py", 3, "`self.inner` holds Impl")
DEFINED = Evidence("i.py", 7, "`Impl` defines `hook`")


def _chain(*links: Evidence) -> tuple[Evidence, ...]:
    return UnforwardedHook().finding(path="w.py", line=1, column=1, message="m", class_name="pkg.W",
                                     member="hook", evidence=links).evidence


def test_a_repeated_link_is_kept_once_where_it_first_appears():
    assert _chain(SITE, HELD, SITE, DEFINED, HELD) == (SITE, HELD, DEFINED)


def test_a_link_supporting_in_one_place_and_needed_in_another_is_part_of_the_chain():
    backing = Evidence(HELD.path, HELD.line, HELD.note, supporting=True)
    assert _chain(SITE, backing, DEFINED, HELD) == (SITE, HELD, DEFINED)
    # and the other way round: a later supporting copy does not demote it
    assert _chain(SITE, HELD, DEFINED, backing) == (SITE, HELD, DEFINED)


def test_links_differing_in_any_of_place_or_note_are_distinct():
    moved = Evidence(HELD.path, HELD.line + 1, HELD.note)
    renamed = Evidence(HELD.path, HELD.line, HELD.note + "!")
    assert _chain(HELD, moved, renamed) == (HELD, moved, renamed)
