"""Suite-wide settings."""

from __future__ import annotations

from lance_semantic.codecs import json as _json_codec

# The JSON codec converts a process's first small inputs with its pure-Python reference and
# loads its numba kernels only for more work (codecs/_kernel_gate.py). The suite tests the
# kernels on every input instead; tests/unit/codecs/test_first_use.py tests the gate itself.
_json_codec._GATE.reference_bytes = 0
