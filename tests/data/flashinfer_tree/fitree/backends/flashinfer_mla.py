"""A FlashInfer MLA backend: its chunked-prefill hook plans the ragged prefill wrapper through a
helper object it holds."""

try:
    from flashinfer import BatchPrefillWithRaggedKVCacheWrapper
except ImportError:  # CPU machines: the class is only needed when a backend is built
    BatchPrefillWithRaggedKVCacheWrapper = None

from fitree.backends.base import AttentionBackend
from fitree.shapes import get_attention_tp_size


class ChunkPlanner:
    """Plans the ragged prefill for chunked MHA (the helper the hook goes through)."""

    def __init__(self, model_runner, attn_backend: "FlashInferMLABackend"):
        cfg = model_runner.model_config
        self.num_heads = cfg.num_attention_heads // get_attention_tp_size()
        self.head_dim_qk = cfg.qk_nope_head_dim + cfg.qk_rope_head_dim
        self.head_dim_vo = cfg.v_head_dim
        self.dtype = model_runner.dtype
        self.ragged = attn_backend.prefill_wrapper_ragged

    def update(self, forward_batch, disable_ragged: bool = False):
        if disable_ragged:
            return
        import torch

        lens = list(forward_batch.extend_seq_lens_cpu)
        indptr = torch.tensor([0] + [sum(lens[: i + 1]) for i in range(len(lens))], dtype=torch.int32)
        self.ragged.plan(indptr, indptr, self.num_heads, self.num_heads, self.head_dim_qk,
                         head_dim_vo=self.head_dim_vo, causal=True, q_data_type=self.dtype,
                         kv_data_type=self.dtype)


class FlashInferMLABackend(AttentionBackend):
    def __init__(self, model_runner):
        import torch

        self.workspace = torch.empty(128 * 1024 * 1024, dtype=torch.uint8, device=model_runner.device)
        self.prefill_wrapper_ragged = BatchPrefillWithRaggedKVCacheWrapper(self.workspace, "NHD")
        self.chunk_planner = ChunkPlanner(model_runner, self)

    def init_forward_metadata(self, forward_batch):
        self.chunk_planner.update(forward_batch)

    def init_mha_chunk_metadata(self, forward_batch, disable_ragged: bool = False):
        self.chunk_planner.update(forward_batch, disable_ragged)

    def forward_extend(self, q, k, v, forward_batch):
        return self.prefill_wrapper_ragged.run(q, k, v)


class TrtllmMLABackend(FlashInferMLABackend):
    """Plans its own chunks; falls back to the FlashInfer plan without the ragged part."""

    def init_mha_chunk_metadata(self, forward_batch):
        super().init_mha_chunk_metadata(forward_batch, disable_ragged=True)
