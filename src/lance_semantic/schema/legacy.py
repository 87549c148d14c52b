"""The upgrade commit's content: each legacy alias of a table schema rewritten to its
canonical semantic type plus the output encoding that reproduces today's read type
(layer L2; spec "Compatibility and Migration", the upgrade table).
"""

from __future__ import annotations

from dataclasses import replace

from ..types import is_legacy_alias, parse_any_logical_type
from .field import Field, TableSchema, freeze_metadata
from .semantic import OUTPUT_ENCODING_KEY

__all__ = ["upgrade_schema", "legacy_aliases"]


def legacy_aliases(schema: TableSchema) -> list[Field]:
    """The fields whose ``logical_type`` is a legacy alias (``large_string``, ``dict:…``)."""
    return [f for f in schema if is_legacy_alias(f.logical_type)]


def _upgrade_field(field: Field) -> Field:
    # dictionaries of non-string values are no alias at all: parsing refuses them
    alias = is_legacy_alias(field.logical_type) or field.logical_type.startswith("dict:")
    if not alias and OUTPUT_ENCODING_KEY not in field.metadata:
        return field
    implied = None
    if alias:
        canonical, implied = parse_any_logical_type(field.logical_type, path=field.path)
        field = replace(
            field,
            logical_type=str(canonical),
            dictionary=None,  # a dictionary is a layout, recorded as the output encoding
        )
    # the entry becomes the one that reproduces today's read type: on a legacy table an
    # output-encoding key is plain metadata that no read honours, so one found there is
    # replaced (or dropped) rather than turned into a read type, valid or not
    metadata = dict(field.metadata)
    metadata.pop(OUTPUT_ENCODING_KEY, None)
    if implied is not None:
        metadata[OUTPUT_ENCODING_KEY] = implied.encode()
    return replace(field, metadata=freeze_metadata(metadata))


def upgrade_schema(schema: TableSchema) -> TableSchema:
    """``schema`` with every legacy alias rewritten; field ids, names, nullability, children
    and all other metadata unchanged. Every field's output-encoding entry is the one its
    alias implies (none for canonical names): a flagged table's reads then return exactly
    the Arrow types the legacy table's reads returned.

    Used by the upgrade commit and by a restore of a pre-upgrade version onto a flagged
    table (flagged writers write only canonical names).

    Raises
    ------
    UnsupportedTypeError
        A legacy type with no canonical form (a dictionary of non-string values).
    """
    flat = [_upgrade_field(f) for f in schema.flatten()]
    return TableSchema.from_flat(flat, schema.metadata)
