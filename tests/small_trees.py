"""Small trees of our own for the ecosystem tests (not the rules' examples, which may change):
AL001 and AL002, as packages."""

_BACKENDS = """
class Backend:
    def forward(self, batch):
        raise NotImplementedError

class FlashBackend(Backend):
    def forward(self, batch):
        return batch

    def plan_chunks(self, batch, disable_ragged: bool = False):
        self.planned = batch
"""
TREES = {
    "AL001": {
        "serving/backends.py": _BACKENDS + """
class HybridBackend(Backend):
    def __init__(self, full_attn_backend: Backend):
        self.full_attn_backend = full_attn_backend

    def forward(self, batch):
        return self.full_attn_backend.forward(batch)
""",
        "serving/model.py": """
from serving.backends import Backend

def prefill(backend: Backend, batch):
    if hasattr(backend, "plan_chunks"):
        backend.plan_chunks(batch)
    return backend.forward(batch)
""",
    },
    "AL002": {
        "serving/backends.py": _BACKENDS + """
class TrtBackend(FlashBackend):
    def plan_chunks(self, batch):
        super().plan_chunks(batch, disable_ragged=True)

class HybridBackend(Backend):
    def __init__(self, full_attn_backend: Backend):
        self.full_attn_backend = full_attn_backend

    def forward(self, batch):
        return self.full_attn_backend.forward(batch)

    def plan_chunks(self, batch, disable_ragged: bool = False):
        hook = getattr(self.full_attn_backend, "plan_chunks", None)
        if hook is not None:
            hook(batch, disable_ragged)
""",
    },
}
