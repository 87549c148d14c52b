"""Suite-wide settings."""

from __future__ import annotations

from lance_semantic.codecs import json as _json_codec

# The JSON codec converts a process's first small inputs with its pure-Python reference and
# loads its numba kernels only for more work (codecs/_kernel_gate.py). The suite tests the
# kernels on every input instead; tests/unit/codecs/test_first_use.py tests the gate itself.
_json_codec._GATE.reference_bytes = 0

# IVF search scores a process's first partitions with numpy and its numba kernels once the
# process has done more search work (vector/ivf_search.py, the same gate). The suite runs
# the kernels on every search; tests/interop/test_ivf_search_kernels.py holds them to the
# numpy reference.
from lance_semantic.vector import ivf_search as _ivf_search  # noqa: E402

_ivf_search._GATE.reference_bytes = 0
