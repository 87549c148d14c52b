"""Pure array -> array value codecs (layer L2).

:mod:`~lance_semantic.codecs.json`: arrow.json text <-> JSONB (lance.json), errors name the row.
"""

from __future__ import annotations

from .json import MAX_NESTING_DEPTH, decode_jsonb, encode_json, validate_jsonb

__all__ = ["encode_json", "decode_jsonb", "validate_jsonb", "MAX_NESTING_DEPTH"]
