"""AL900 unused-suppression: a suppression comment that silences no finding."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from ..linter.findings import Evidence, Finding
from .base import Example, SuppressionRule

if TYPE_CHECKING:
    from ..linter.files.suppress import StaleSuppression

_TREE = '''
class Backend:
    def forward(self, batch):
        raise NotImplementedError

class FlashBackend(Backend):
    def forward(self, batch):
        return batch

    def plan_chunks(self, batch):
        self.planned = batch
'''

_PROBE = '''
from serving.backends import Backend

def prefill(backend: Backend, batch):
    if hasattr(backend, "plan_chunks"):
        backend.plan_chunks(batch)
    return backend.forward(batch)
'''


class UnusedSuppression(SuppressionRule):
    code = "AL900"
    name = "unused-suppression"
    severity = "warning"
    summary = "A suppression comment that silences no finding."
    doc = """\
## What it finds
A `# noqa: ALxxx` or `# attn-lint: ignore[ALxxx]` comment that silenced no finding in this run
(reported only with `--report-unused-suppressions`). A bare `# noqa` is never reported: other tools
may own it; codes of other tools (`# noqa: E501`) are ignored.

## Why it is bad
A stale suppression hides the next real finding on that line or class.

## Example
```python
class HybridBackend(Backend):  # attn-lint: ignore[AL001]   (the wrapper now forwards the hook)
    def __init__(self, inner: Backend):
        self.inner = inner

    def plan_chunks(self, batch):
        return self.inner.plan_chunks(batch)
```

## How to fix
Delete the comment, or the codes in it that no longer apply.
"""

    # Examples of this phase run through the command line's report (tests/test_rules_examples.py):
    # a comment is unused only against the tree rules' findings. A finding of this rule has no
    # class or member: ("", "") each.
    INVALID = [
        Example({"serving/backends.py": _TREE + '''
class HybridBackend(Backend):  # attn-lint: ignore[AL001]
    def __init__(self, inner: Backend):
        self.inner = inner

    def forward(self, batch):
        return self.inner.forward(batch)

    def plan_chunks(self, batch):
        return self.inner.plan_chunks(batch)
''', "serving/model.py": _PROBE}, expect=(("", ""),)),
    ]
    VALID = [
        # The comment silences the AL001 finding on the wrapper that does not forward the hook.
        Example({"serving/backends.py": _TREE + '''
class HybridBackend(Backend):  # attn-lint: ignore[AL001]
    def __init__(self, inner: Backend):
        self.inner = inner

    def forward(self, batch):
        return self.inner.forward(batch)
''', "serving/model.py": _PROBE}),
    ]

    def check_suppressions(self, stale: Iterable[StaleSuppression]) -> Iterable[Finding]:
        for s in stale:
            yield self.finding(path=s.path, line=s.line, column=s.col + 1,
                               message=f"unused suppression `{s.text}`: no {', '.join(s.stale)} finding here",
                               class_name="", member="",
                               evidence=(Evidence(s.path, s.line, "the suppression comment"),))
