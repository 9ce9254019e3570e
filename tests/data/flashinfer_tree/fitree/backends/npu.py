"""An NPU backend: its context-parallel hook splits the batch; it never plans FlashInfer."""

from fitree.backends.base import AttentionBackend


class NpuBackend(AttentionBackend):
    def __init__(self, model_runner):
        self.cp_size = 2
        self.cp_metadata = None

    def init_forward_metadata(self, forward_batch):
        self.cp_metadata = None

    def prepare_cp_metadata(self, forward_batch):
        lens = list(forward_batch.extend_seq_lens_cpu)
        self.cp_metadata = [lens[i::self.cp_size] for i in range(self.cp_size)]

    def forward_extend(self, q, k, v, forward_batch):
        return q
