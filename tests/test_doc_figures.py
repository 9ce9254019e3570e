"""Each performance and memory figure is stated once, in docs/performance.md's "Current figures",
and quoted from there (issue 38: the docs gave the server's edit time as "under a second" and as
1.44 s, its memory as 612 MB and as 345 MB)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def current_rows() -> list[str]:
    text = (ROOT / "docs" / "performance.md").read_text()
    section = text.split("## Current figures", 1)[1].split("\n## ", 1)[0]
    return [line for line in section.splitlines() if line.startswith("|")]


def test_the_readme_quotes_the_current_figures_word_for_word():
    readme = (ROOT / "README.md").read_text()
    speed = readme.split("## Speed", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in speed.splitlines() if line.startswith("|")]
    assert rows and rows == current_rows()


def test_the_usage_guide_states_no_speed_or_memory_figure_of_its_own():
    usage = re.sub(r"```.*?```", "", (ROOT / "docs" / "usage.md").read_text(), flags=re.S)  # example output
    # The tables generated from the declarations quote `--help`, which is the command's own word.
    usage = re.sub(r"<!-- generated: (.*?) -->.*?<!-- end generated: \1 -->", "", usage, flags=re.S)
    figures = re.findall(r"\b\d[\d,.]*\s?(?:MB|GB|ms)\b|\bunder a second\b|\b\d+(?:\.\d+)?(?:-\d+(?:\.\d+)?)? s\b", usage)
    assert figures == [], figures
