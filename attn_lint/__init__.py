"""attn-lint: whole-tree analysis of backend interface drift in LLM serving code."""

import os as _os

__version__ = "0.1.0"

# In a source checkout the subpackages are the top-level folders linter/, rules/ and
# runtime_check/ beside this one (an install maps them under attn_lint/ through package-dir);
# let `python -m attn_lint` and imports work from the checkout too.
_here = _os.path.dirname(_os.path.abspath(__file__))
if not _os.path.isdir(_os.path.join(_here, "linter")) and _os.path.isfile(
        _os.path.join(_os.path.dirname(_here), "linter", "app", "engine.py")):
    __path__.append(_os.path.dirname(_here))
