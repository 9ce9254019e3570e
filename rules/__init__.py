"""The rules, one module each. Codes are stable: a retired code is never reused."""

from .al001_unforwarded_hook import UnforwardedHook
from .al002_delegation_signature_mismatch import DelegationSignatureMismatch
from .al003_wrapper_inherits_noop_default import WrapperInheritsNoopDefault
from .base import Example, Reach, Rule

ALL_RULES: tuple[Rule, ...] = (UnforwardedHook(), DelegationSignatureMismatch(), WrapperInheritsNoopDefault())
RULES_BY_CODE = {r.code: r for r in ALL_RULES}

__all__ = ["ALL_RULES", "RULES_BY_CODE", "Example", "Reach", "Rule"]
