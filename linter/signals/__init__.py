"""The confidence signals, one per module: each reads code structure and rules pairings in or out.

Order matters only for which reason a ruled-out pairing shows: the first signal that rules it out.
Cheap, precise signals come first.
"""

from __future__ import annotations

from ..model.confidence import Signal

# (module name, class name) in the order they are asked; filled in as signals land.
_SIGNALS: tuple[tuple[str, str], ...] = (
    ("wrapper_role", "WrapperRole"),
    ("declared_refusal", "DeclaredRefusal"),
    ("check_only", "CheckOnly"),
    ("delegate_raises", "DelegateRaises"),
    ("model_reach", "ModelReach"),
    ("dominating_guard", "DominatingGuard"),
    ("capability_flag", "CapabilityFlag"),
    ("receiver_gate", "ReceiverGate"),
    ("unsupported_pairing", "UnsupportedPairing"),
    ("platform", "PlatformSignal"),
    ("unpassed_option", "UnpassedOption"),
    ("unknown_delegate", "UnknownDelegate"),
    ("self_call", "SelfCall"),
    ("built_chain", "BuiltChain"),
)


_INSTANCES: list[Signal] = []


def active_signals() -> list[Signal]:
    """One instance of each signal, made on first use (signals keep no state of their own; what
    they learn about a tree is kept on its Context)."""
    if not _INSTANCES:
        import importlib

        _INSTANCES.extend(getattr(importlib.import_module(f"{__name__}.{mod}"), cls)() for mod, cls in _SIGNALS)
    return list(_INSTANCES)


def per_module_derivations() -> list[tuple[str, object]]:
    """The signals' per-module derivations (Signal.per_module)."""
    return [s.per_module for s in active_signals() if s.per_module is not None]
