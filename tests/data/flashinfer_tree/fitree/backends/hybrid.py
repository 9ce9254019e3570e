"""Wrappers: `HybridBackend` forwards the per-batch plan but not the optional hooks;
`ForwardingHybrid` forwards the chunk hook with an extra argument; `OneArgHybrid` forwards it
as every implementation takes it."""

from fitree.backends.base import AttentionBackend


class LinearBackend(AttentionBackend):
    def init_forward_metadata(self, forward_batch):
        pass

    def forward_extend(self, q, k, v, forward_batch):
        return q


class HybridBackend(AttentionBackend):
    def __init__(self, full_backend: AttentionBackend, linear_backend: LinearBackend):
        self.full_backend = full_backend
        self.linear_backend = linear_backend

    def init_forward_metadata(self, forward_batch):
        self.full_backend.init_forward_metadata(forward_batch)
        self.linear_backend.init_forward_metadata(forward_batch)

    def forward_extend(self, q, k, v, forward_batch):
        return self.full_backend.forward_extend(q, k, v, forward_batch)


class ForwardingHybrid(HybridBackend):
    def init_mha_chunk_metadata(self, forward_batch, disable_ragged: bool = False):
        init = getattr(self.full_backend, "init_mha_chunk_metadata", None)
        if init is not None:
            init(forward_batch, disable_ragged)

    def prepare_cp_metadata(self, forward_batch):
        prepare = getattr(self.full_backend, "prepare_cp_metadata", None)
        if prepare is not None:
            prepare(forward_batch)


class OneArgHybrid(HybridBackend):
    def init_mha_chunk_metadata(self, forward_batch):
        init = getattr(self.full_backend, "init_mha_chunk_metadata", None)
        if init is not None:
            init(forward_batch)

    def prepare_cp_metadata(self, forward_batch):
        prepare = getattr(self.full_backend, "prepare_cp_metadata", None)
        if prepare is not None:
            prepare(forward_batch)
