"""The model runner: a registry of backends by name, and the wrapper a hybrid model gets."""

from fitree.backends.base import AttentionBackend
from fitree.backends.flashinfer_mla import FlashInferMLABackend, TrtllmMLABackend
from fitree.backends.hybrid import ForwardingHybrid, HybridBackend, LinearBackend, OneArgHybrid
from fitree.backends.npu import NpuBackend

BACKENDS = {
    "flashinfer_mla": FlashInferMLABackend,
    "trtllm_mla": TrtllmMLABackend,
    "npu": NpuBackend,
}

_installed = None


def get_backend() -> AttentionBackend:
    return _installed


def build_backend(runner, name: str, wrapper: str):
    full = BACKENDS[name](runner)
    if wrapper == "hybrid":
        return HybridBackend(full, LinearBackend())
    if wrapper == "forwarding":
        return ForwardingHybrid(full, LinearBackend())
    if wrapper == "one_arg":
        return OneArgHybrid(full, LinearBackend())
    return full
