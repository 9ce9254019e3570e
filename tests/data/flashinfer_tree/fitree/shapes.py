"""Process state the launcher sets (read through an accessor that refuses before launch)."""

_parallel = None


def get_attention_tp_size() -> int:
    assert _parallel is not None, "parallel state is not initialised"
    return _parallel.world_size
