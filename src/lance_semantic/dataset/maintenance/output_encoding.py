"""``Dataset.set_output_encoding``: change the read layout a field's values default to, in a
metadata-only commit (layer L5; spec "Output Encoding")."""

from __future__ import annotations

from ...commit import commit
from ...errors import InvalidOutputEncodingError
from ...manifest import Manifest, UpdateConfig, UpdateMap
from ...schema import OUTPUT_ENCODING_KEY, semantic_type_of
from ...types.layouts import validate_output_encoding
from ..core import Snapshot
from ..core import arguments as args

__all__ = ["set_output_encoding"]


def set_output_encoding(snap: Snapshot, field_path: str, encoding: str | None) -> Manifest:
    """Commit ``Dataset.set_output_encoding`` on ``snap`` (see it for the errors)."""
    args.check_str("field_path", field_path)
    if encoding is not None:
        args.check_str("encoding", encoding, empty=True)
    shown = str(encoding)
    if not snap.semantic_types:
        raise InvalidOutputEncodingError(
            field_path,
            shown,
            "legacy table: output encodings need semantic types (upgrade the table first)",
        )
    try:
        field = snap.semantic_schema.field(field_path)
    except KeyError:
        raise InvalidOutputEncodingError(field_path, shown, "no such field") from None
    if encoding is not None:
        validate_output_encoding(semantic_type_of(field), encoding, path=field_path)
    op = UpdateConfig(field_metadata_updates={field.id: UpdateMap({OUTPUT_ENCODING_KEY: encoding})})
    return commit(snap.store, snap.manifest, op)
