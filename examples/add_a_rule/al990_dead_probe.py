"""AL990 dead-probe: the worked example of CONTRIBUTING's "How to add a rule".

A complete rule, kept out of `rules/` so that it never runs for users: copy this file into
`rules/` (with a code of its own) and it is discovered by its file name like the others.
tests/test_add_a_rule_example.py builds it against its own examples on every run.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from attn_lint.linter.findings import Evidence, Facts, Finding
from attn_lint.linter.model.confidence import Pairing
from attn_lint.rules import Example, Reach, Rule

if TYPE_CHECKING:
    from attn_lint.linter.model.context import Context

_FAMILY = '''
class Backend:
    def forward(self, batch):
        raise NotImplementedError

class FlashBackend(Backend):
    def forward(self, batch):
        return batch

    def init_chunk_metadata(self, batch):
        self.planned = batch
'''


@dataclass(frozen=True)
class DeadProbeFacts(Facts):
    """What a finding passes on beyond its message: typed fields, read back with `.of(finding)`."""

    probe: str | None = None  # `path:line` of the probe


class DeadProbe(Rule):
    code = "AL990"
    name = "dead-probe"
    severity = "warning"
    site_kinds = ("probe",)
    facts = DeadProbeFacts
    summary = "A probe of a member that no class its receiver can be defines: it is never true."
    doc = """\
## What it finds
`hasattr(x, "m")` or `getattr(x, "m", default)` where every class `x` can be (a family member and
its subclasses) lacks `m`, none has `__getattr__`, and no code stores `m` on them.

## Why it is bad
The guarded code never runs: a typo (`init_chunk_metdata`) or a hook renamed away in the family
while its caller kept the old name. Nothing fails; the optional path is silently dead.

## Example
```python
if hasattr(backend, "init_chunk_metdata"):   # the family defines `init_chunk_metadata`
    backend.init_chunk_metdata(batch)
```

## How to fix
Probe the name the family defines, or drop the dead branch.
"""

    INVALID = [
        Example({"serving/backends.py": _FAMILY + '''
class Runner:
    def __init__(self, backend: Backend):
        self.backend = backend

    def step(self, batch):
        if hasattr(self.backend, "init_chunk_metdata"):
            self.backend.init_chunk_metdata(batch)
'''}, expect=(("Runner", "init_chunk_metdata"),)),
    ]
    VALID = [
        # The member exists on one implementation: a live optional hook.
        Example({"serving/backends.py": _FAMILY + '''
class Runner:
    def __init__(self, backend: Backend):
        self.backend = backend

    def step(self, batch):
        if hasattr(self.backend, "init_chunk_metadata"):
            self.backend.init_chunk_metadata(batch)
'''}, reaches=Reach("Runner", "init_chunk_metadata", wrapper=False)),
    ]

    def reaches(self, ctx: Context, qual: str, member: str) -> bool:
        """A probe of `member` made in `qual`'s own code."""
        return any(site.cls == qual for site, _ in ctx.probes.get(member, ()))

    def check(self, ctx: Context) -> Iterable[Finding]:
        index, model = ctx.index, ctx.model
        for member, sites in sorted(ctx.probes.items()):
            for site, probe in sites:
                res = ctx.receiver_types(site, probe.receiver, probe.line, probe.col, "probe")
                statics = sorted(t for t in res.instances() if t in model.family_members)
                if not statics:
                    continue  # a receiver the tree cannot type says nothing
                classes = {c for t in statics for c in (t, *index.descendants(t))}
                # Defined (a method or class attribute found through the MRO), answered by
                # `__getattr__`, or stored on instances (`self.<member> = ...`): the probe can hold.
                if any(index.lookup(c, member) is not None or index.has_getattr_hook(c)
                       or member in index.assignments(c) for c in classes):
                    continue
                where = f"{site.path}:{probe.line}"
                finding = self.finding(
                    path=site.path, line=probe.line, column=probe.col + 1, class_name=site.cls or site.module,
                    member=member,
                    message=f"`{member}` is probed on `{statics[0].rsplit('.', 1)[-1]}`, but no class it can be "
                            f"defines it: the probe is never true",
                    evidence=[Evidence(site.path, probe.line, f"`{member}` is probed in `{site.where}`"),
                              *res.steps[:2]],
                    facts=DeadProbeFacts(probe=where))
                # One pairing per class the receiver can be: the signals rule some out (an abstract
                # class is never the object); with every one ruled out the finding is latent.
                yield self.assessed(ctx, finding, [
                    Pairing(self.code, None, c, member, site, probe.line, "probe", probe.receiver)
                    for c in sorted(classes)])
