"""Finding messages say what kind of member is hidden and what the probe does without it."""

from __future__ import annotations

from conftest import lint, write_tree

BASE = '''
class Pool:
    def get(self, i):
        raise NotImplementedError


class DensePool(Pool):
    def __init__(self):
        self.k_buffer = []

    def get(self, i):
        return self.k_buffer[i]


class HybridPool(Pool):
    def __init__(self, full: Pool):
        self.full = full

    def get(self, i):
        return self.full.get(i)
'''


def test_a_hidden_data_attribute_read_through_getattr_with_a_default(tmp_path):
    root = write_tree(tmp_path, {"store/pools.py": BASE, "store/user.py": '''
from store.pools import Pool

def size(pool: Pool):
    return len(getattr(pool, "k_buffer", ()))
'''})
    (f,) = lint(root).findings
    assert "hides attribute `k_buffer`" in f.message
    assert '`getattr(..., "k_buffer", default)` at store/user.py:5 returns the default for the wrapper' in f.message
    assert "the delegate's value is never used" in f.message
    assert "hook" not in f.message.split(":")[0] and "is False" not in f.message


def test_a_hidden_method_probed_with_hasattr(tmp_path):
    root = write_tree(tmp_path, {"store/pools.py": BASE.replace(
        "        return self.k_buffer[i]\n", "        return self.k_buffer[i]\n\n    def warm(self):\n        pass\n"),
        "store/user.py": '''
from store.pools import Pool

def prepare(pool: Pool):
    if hasattr(pool, "warm"):
        pool.warm()
'''})
    (f,) = lint(root).findings
    assert "hides method `warm`" in f.message
    assert "is False for the wrapper, so the hook never runs" in f.message


def test_statistics_count_per_severity(tmp_path):
    from attn_lint.linter.report import statistics

    root = write_tree(tmp_path, {"store/pools.py": BASE.replace(
        "        return self.k_buffer[i]\n", "        return self.k_buffer[i]\n\n    def warm(self):\n        pass\n"),
        "store/user.py": '''
from store.pools import Pool

def prepare(pool: Pool):
    if hasattr(pool, "warm"):
        pool.warm()
    return len(getattr(pool, "k_buffer", ()))
'''})
    result = lint(root)
    assert sorted((c, k, s) for c, _, k, s, _ in statistics.counts(result)) == [
        ("AL001", 1, "error"), ("AL001", 1, "warning")]


def test_summary_line_wording(tmp_path):
    from click.testing import CliRunner

    from attn_lint.linter.app.cli import main
    (tmp_path / "one.py").write_text("x = 1\n")
    out = CliRunner().invoke(main, ["--no-cache", str(tmp_path / "one.py")]).output
    assert "No findings in 1 file," in out and "Found 0" not in out and "1 files" not in out
