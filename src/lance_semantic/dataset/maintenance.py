"""Table maintenance: the metadata-only upgrade to semantic types (layer L5; spec
"Compatibility and Migration: Upgrade"), and the JSON codec's warm-up."""

from __future__ import annotations

import logging
from typing import TypeVar

from ..codecs import json as json_codec
from ..commit.committer import commit, load_manifest
from ..errors import InvalidOutputEncodingError
from ..manifest.flags import FLAG_SEMANTIC_TYPES
from ..manifest.model import Manifest, Project, Restore, UpdateConfig, UpdateMap
from ..schema.legacy import upgrade_schema
from ..schema.semantic import OUTPUT_ENCODING_KEY, semantic_type_of
from ..types.layouts import validate_output_encoding
from . import arguments as args
from .snapshot import Snapshot, TableHandle

__all__ = [
    "upgrade_dataset",
    "upgrade_semantic_types",
    "set_output_encoding",
    "restore_version",
    "warm_up",
]

_log = logging.getLogger("lance_semantic")


H = TypeVar("H", bound=TableHandle)


def upgrade_dataset(ds: H) -> H:
    """Upgrade ``ds`` (advanced in place) to the Semantic Type Contract in one commit.

    Each legacy alias becomes its canonical type plus the output encoding that reproduces
    today's read type, then ``FLAG_SEMANTIC_TYPES`` is set. No data file is touched and
    reads return the same Arrow types, values and field ids as before. Upgrading a flagged
    table is a no-op (logged, nothing committed).
    """
    ds._apply(lambda snap: (upgrade_semantic_types(snap), None))
    return ds


def upgrade_semantic_types(snap: Snapshot) -> Manifest:
    """Commit the upgrade of ``snap`` (see :func:`upgrade_dataset`); ``snap``'s own
    manifest when it already uses semantic types."""
    if snap.semantic_types:
        _log.info(
            "%s already uses semantic types (version %d): nothing to upgrade",
            snap.uri,
            snap.version,
        )
        return snap.manifest
    manifest = snap.manifest
    schema = upgrade_schema(manifest.schema)
    return commit(snap.store, manifest, Project(schema=schema), add_flags=FLAG_SEMANTIC_TYPES)


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


def restore_version(snap: Snapshot) -> Manifest:
    """Commit ``snap``'s version as the newest one (``Dataset.restore``)."""
    latest = load_manifest(snap.store)
    return commit(snap.store, latest, Restore(version=snap.version))


def warm_up() -> dict[str, float]:
    """Load the JSON codec's compiled kernels, or compile them into the user-wide cache now
    (the first time on a machine: 10 to 30 s each, said on stderr); seconds each took.

    Not needed: a process converts its first few MB of JSON without them and loads them when
    its work grows. Useful in an image build (``lance-semantic warm-up``) or before timing.

    >>> import lance_semantic as ls
    >>> sorted(ls.warm_up())
    ['check_rows', 'encode_rows', 'render_rows']
    """
    return json_codec.warm_up()
