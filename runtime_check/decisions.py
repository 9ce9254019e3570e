"""The verdict of a verified finding: what was tested, in words that say so.

Three checks can run on a finding, each on the real code:

1. **The static fact** (scenarios.py): the real wrapper hides the hook (AL001), the real call is
   refused by the real signature (AL002), the real wrapper resolves the hook to the base's no-op
   (AL003; ``placeholder-reached`` when that default is a ``raise NotImplementedError`` placeholder
   and the call raises it). The static analysis had already proved this; reproducing it shows the classes load and
   behave as read, not that any configuration breaks. Verdicts ``attribute-hidden``,
   ``call-rejected`` (with Python's TypeError), ``noop-reached``.
2. **The pairing** (pairing.py): the code's own construction path builds the wrapper around that
   implementation. Verdict ``pairing-reproduced``; ``not-reproduced`` when every path was explored
   and none builds it.
3. **The consequence** (the GPU smoke test, flashinfer_smoke.py / real_hook.py): with the real
   wrapper in front of the implementation's real FlashInfer hook, prefill fails or gives wrong
   output. Verdict ``consequence-reproduced``.

Only ``pairing-reproduced`` and ``consequence-reproduced`` are **confirmed**. ``not-reproduced``
says the claim is likely false (the fact does not hold on the real classes, or no path builds the
pairing); ``unverifiable`` says why nothing could be decided.
"""

from __future__ import annotations

from typing import Any

from ..rules import ALL_RULES

CONSEQUENCE = "consequence-reproduced"
PAIRING = "pairing-reproduced"
NOT_REPRODUCED = "not-reproduced"
UNVERIFIABLE = "unverifiable"
# Each rule's static fact (Rule.runtime_check): what a reproduced fact is called, and means.
_CHECKS = [r.runtime_check for r in ALL_RULES if r.runtime_check is not None]
STATIC_FACT = {r.code: r.runtime_check.static_fact for r in ALL_RULES if r.runtime_check is not None}
# AL003 over a placeholder: its static fact is a NotImplementedError, not silence (the scenario says
# so in its facts as "static_fact").
PLACEHOLDER_REACHED = "placeholder-reached"

VERDICTS = (CONSEQUENCE, PAIRING, *STATIC_FACT.values(), PLACEHOLDER_REACHED, NOT_REPRODUCED, UNVERIFIABLE)
CONFIRMED = frozenset({CONSEQUENCE, PAIRING})

# What each verdict means, for the table legend, the docs and the JSON/SARIF readers.
MEANING = {
    CONSEQUENCE: "confirmed: the GPU run of the real wrapper and hook failed as the finding predicts",
    PAIRING: "confirmed: the code's own construction path built the wrapper around that implementation",
    **{c.static_fact: c.meaning for c in _CHECKS},
    PLACEHOLDER_REACHED: "static fact reproduced: the hook resolves to a placeholder and raises "
                         "NotImplementedError; pairing not shown",
    NOT_REPRODUCED: "the claim did not hold on the real code: treat the finding as a likely false positive",
    UNVERIFIABLE: "nothing could be decided (the reason says why)",
}

# GPU smoke results that show the predicted failure (flashinfer_smoke.OUTCOME_SEVERITY).
GPU_FAILURES = frozenset({"wrong-output", "qo-indptr-mismatch", "type-error"})


def is_confirmed(verdict: str) -> bool:
    return verdict in CONFIRMED


def decide(code: str, static: str, static_detail: str, pairing: Any, gpu: Any,
           fact: str | None = None) -> tuple[str, str]:
    """(verdict, detail) from the three checks.

    ``static``: ``fact`` (reproduced), ``not-reproduced`` or ``unverifiable`` (scenarios.Outcome).
    ``pairing``: a pairing.PairingResult, or a string saying why it was not checked, or None.
    ``gpu``: the smoke test's result dict, a string (not run, and why), or None.
    ``fact``: the static fact's verdict when the scenario names another than the rule's own
    (``placeholder-reached`` for AL003 over a placeholder).
    """
    if static != "fact":
        return static, static_detail
    fact = fact or STATIC_FACT.get(code, UNVERIFIABLE)
    status = getattr(pairing, "status", None)
    pdetail = getattr(pairing, "detail", pairing if isinstance(pairing, str) else "")
    if status == "not-reproduced":
        return NOT_REPRODUCED, f"{static_detail}; but the pairing is not built: {pdetail}"
    failed = isinstance(gpu, dict) and gpu.get("verdict") in GPU_FAILURES
    if failed and status in ("reproduced", "unverifiable") and not getattr(pairing, "dead", False):
        return CONSEQUENCE, f"GPU: {gpu.get('detail')} ({static_detail}; pairing: {pdetail})"
    if status == "reproduced":
        return PAIRING, f"{pdetail} ({static_detail})"
    if pdetail:
        return fact, f"{static_detail}; pairing not shown: {pdetail}"
    return fact, static_detail
