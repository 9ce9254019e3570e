class AttentionBackend:
    """The family root: every backend plans per batch and runs prefill."""

    def init_forward_metadata(self, forward_batch):
        raise NotImplementedError

    def forward_extend(self, q, k, v, forward_batch):
        raise NotImplementedError
