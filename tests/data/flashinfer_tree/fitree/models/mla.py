"""Model code: probes the installed backend for its optional hooks."""

from fitree.runner import get_backend


def prefill(q, k, v, forward_batch):
    backend = get_backend()
    if hasattr(backend, "prepare_cp_metadata"):
        backend.prepare_cp_metadata(forward_batch)
    if hasattr(backend, "init_mha_chunk_metadata"):
        backend.init_mha_chunk_metadata(forward_batch)
    return backend.forward_extend(q, k, v, forward_batch)
