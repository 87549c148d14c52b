"""Model <-> protobuf conversion for fields, fragments and manifests (private, layer L3).

Everything here works on the generated ``_pb`` classes, which never leave the
``manifest`` package. Problems in decoded input raise :class:`DecodeProblem`; the public
codec functions turn it into :class:`~lance_semantic.errors.CorruptManifestError` with
the file's path.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from operator import methodcaller
from types import MappingProxyType
from typing import TypeVar

from google.protobuf.message import Message

from ..errors import NotSupportedYetError
from ..schema import EMPTY_METADATA, Field, TableSchema
from ._fragments import fragments_of
from ._pb import lance_file_pb2 as fpb
from ._pb import lance_table_pb2 as tpb
from .model import DataFile, DeletionFile, Fragment, Manifest, WriterVersion

__all__ = [
    "DecodeProblem",
    "fields_to_pb",
    "schema_from_pb",
    "metadata_to_pb",
    "metadata_from_pb",
    "str_map_to_pb",
    "str_map_from_pb",
    "fragment_to_pb",
    "fragment_from_pb",
    "manifest_to_pb",
    "manifest_from_pb",
    "rest_of",
]

_DELETION_TYPES = {"arrow": 0, "bitmap": 1}
_DELETION_NAMES = {0: "arrow", 1: "bitmap"}
_NS = 1_000_000_000
_NO_WRITER_VERSION = WriterVersion("", "")


class DecodeProblem(Exception):
    """Decoded protobuf content is inconsistent; the message is the reason."""


def rest_of(pb: Message, modelled: Iterable[str]) -> bytes:
    """Serialized ``pb`` without the ``modelled`` fields: what a model keeps as passthrough."""
    copy = type(pb)()
    copy.CopyFrom(pb)
    for name in modelled:
        copy.ClearField(name)
    data: bytes = copy.SerializeToString()
    return data


# ---------------------------------------------------------------------------------------
# maps (declared as repeated entry messages so that entry order survives)


def metadata_to_pb(entries: Iterable[fpb.MetadataEntry], metadata: Mapping[str, bytes]) -> None:
    """Append ``metadata`` to a repeated ``MetadataEntry`` field (``entries``)."""
    add = entries.add  # type: ignore[attr-defined]
    for key, value in metadata.items():
        add(key=key, value=value)


def metadata_from_pb(entries: Sequence[fpb.MetadataEntry]) -> Mapping[str, bytes]:
    if not entries:
        return EMPTY_METADATA
    return MappingProxyType({e.key: e.value for e in entries})


def str_map_to_pb(entries: Iterable[tpb.StringEntry], values: Mapping[str, str]) -> None:
    add = entries.add  # type: ignore[attr-defined]
    for key, value in values.items():
        add(key=key, value=value)


def str_map_from_pb(entries: Sequence[tpb.StringEntry]) -> dict[str, str]:
    return {e.key: e.value for e in entries}


# ---------------------------------------------------------------------------------------
# schema


def _field_to_pb(f: Field) -> fpb.Field:
    pb = fpb.Field(
        name=f.name,
        id=f.id,
        parent_id=f.parent_id,
        logical_type=f.logical_type,
        nullable=f.nullable,
        encoding=f.encoding,  # type: ignore[arg-type]
        extension_name=f.extension_name or "",
        unenforced_primary_key=f.unenforced_primary_key,
        unenforced_primary_key_position=f.unenforced_primary_key_position,
        unenforced_clustering_key_position=f.unenforced_clustering_key_position,
    )
    metadata_to_pb(pb.metadata, f.metadata)
    if f.dictionary is not None:
        pb.dictionary.SetInParent()
        pb.dictionary.offset, pb.dictionary.length = f.dictionary
    return pb


def _field_from_pb(pb: fpb.Field) -> Field:
    return Field(
        name=pb.name,
        id=pb.id,
        parent_id=pb.parent_id,
        logical_type=pb.logical_type,
        nullable=pb.nullable,
        metadata=metadata_from_pb(pb.metadata),
        extension_name=pb.extension_name or None,
        encoding=pb.encoding,
        dictionary=(
            (pb.dictionary.offset, pb.dictionary.length) if pb.HasField("dictionary") else None
        ),
        unenforced_primary_key=pb.unenforced_primary_key,
        unenforced_primary_key_position=pb.unenforced_primary_key_position,
        unenforced_clustering_key_position=pb.unenforced_clustering_key_position,
    )


def fields_to_pb(target: Iterable[fpb.Field], schema: TableSchema) -> None:
    """Append the flattened (pre-order) ``schema`` to a repeated ``lance.file.Field``."""
    target.extend(_field_to_pb(f) for f in schema.flatten())  # type: ignore[attr-defined]


def schema_from_pb(
    fields: Sequence[fpb.Field], metadata: Sequence[fpb.MetadataEntry] = ()
) -> TableSchema:
    """The schema tree of a flat field list; every parent link must resolve."""
    flat = [_field_from_pb(pb) for pb in fields]
    ids = [f.id for f in flat]
    if len(set(ids)) != len(ids):
        dup = sorted({i for i in ids if ids.count(i) > 1})
        raise DecodeProblem(f"duplicate field ids {dup} in schema")
    schema = TableSchema.from_flat(flat, metadata_from_pb(metadata))
    if sum(1 for _ in schema) != len(flat):
        known = set(ids)
        orphans = [
            f"{f.name}(id {f.id}, parent {f.parent_id})"
            for f in flat
            if f.parent_id != -1 and f.parent_id not in known
        ]
        raise DecodeProblem(
            "schema fields are not a tree"
            + (f": no parent for {', '.join(orphans)}" if orphans else " (parent cycle)")
        )
    return schema


def check_encodable(m: Manifest) -> None:
    """Refuse a manifest whose encoding would silently change meaning."""
    if m.legacy_dictionary_data:
        return
    for f in m.schema:
        if f.dictionary is not None and f.dictionary[1] != 0:
            # legacy (0.1) storage: the offset points into value blobs at the start of the
            # manifest file, which this manifest value does not carry
            raise NotSupportedYetError(
                f"writing a legacy dictionary field ('{f.path}') without its dictionary data"
            )


# ---------------------------------------------------------------------------------------
# fragments

_FRAGMENT_MODELLED = ("id", "files", "deletion_file", "physical_rows")


def _data_file_to_pb(target: tpb.DataFile, d: DataFile) -> None:
    if -1 in d.fields:
        raise ValueError(f"data file {d.path}: field id -1 must never be stored")
    target.path = d.path
    target.fields.extend(d.fields)
    target.column_indices.extend(d.column_indices)
    target.file_major_version = d.file_major_version
    target.file_minor_version = d.file_minor_version
    target.file_size_bytes = d.file_size_bytes
    if d.base_id is not None:
        target.base_id = d.base_id


def _data_file_from_pb(pb: tpb.DataFile) -> DataFile:
    return DataFile(
        path=pb.path,
        fields=tuple(pb.fields),
        column_indices=tuple(pb.column_indices),
        file_major_version=pb.file_major_version,
        file_minor_version=pb.file_minor_version,
        file_size_bytes=pb.file_size_bytes,
        base_id=pb.base_id if pb.HasField("base_id") else None,
    )


def fragment_to_pb(target: tpb.DataFragment, frag: Fragment) -> None:
    """Fill an empty ``DataFragment`` message from ``frag``."""
    target.id = frag.id
    for d in frag.files:
        _data_file_to_pb(target.files.add(), d)
    if frag.deletion_file is not None:
        dfile = frag.deletion_file
        pb = target.deletion_file
        pb.SetInParent()
        pb.file_type = _DELETION_TYPES[dfile.file_type]  # type: ignore[assignment]
        pb.read_version = dfile.read_version
        pb.id = dfile.id
        pb.num_deleted_rows = dfile.num_deleted_rows
        if dfile.base_id is not None:
            pb.base_id = dfile.base_id
    target.physical_rows = frag.physical_rows
    if frag.passthrough:
        target.MergeFromString(frag.passthrough)


#: Decoded fragments by their serialized bytes, and serialized bytes by fragment object:
#: consecutive versions of a table share almost all their fragments, so opening and
#: committing at thousands of fragments decodes and encodes only the new ones. Both are
#: pure functions of immutable values; the caches are bounded (cleared when full).
_DECODED: dict[bytes, Fragment] = {}
_ENCODED: dict[int, tuple[Fragment, bytes]] = {}  # id(fragment) -> (fragment, bytes)
_CACHE_LIMIT = 262_144
K = TypeVar("K")
V = TypeVar("V")


def _remember(cache: dict[K, V], key: K, value: V) -> None:
    if len(cache) >= _CACHE_LIMIT:
        cache.clear()
    cache[key] = value


def fragments_to_pb(target: Iterable[tpb.DataFragment], fragments: Iterable[Fragment]) -> None:
    add = target.add  # type: ignore[attr-defined]
    for frag in fragments:
        known = _ENCODED.get(id(frag))
        if known is not None and known[0] is frag:
            add().MergeFromString(known[1])
            continue
        pb = add()
        fragment_to_pb(pb, frag)
        _remember(_ENCODED, id(frag), (frag, pb.SerializeToString()))


def fragment_from_pb(pb: tpb.DataFragment) -> Fragment:
    deletion = None
    if pb.HasField("deletion_file"):
        d = pb.deletion_file
        file_type = _DELETION_NAMES.get(d.file_type)
        if file_type is None:
            raise DecodeProblem(f"fragment {pb.id}: unknown deletion file type {d.file_type}")
        deletion = DeletionFile(
            file_type=file_type,  # type: ignore[arg-type]
            read_version=d.read_version,
            id=d.id,
            num_deleted_rows=d.num_deleted_rows,
            base_id=d.base_id if d.HasField("base_id") else None,
        )
    return Fragment(
        id=pb.id,
        files=tuple(_data_file_from_pb(f) for f in pb.files),
        physical_rows=pb.physical_rows,
        deletion_file=deletion,
        passthrough=rest_of(pb, _FRAGMENT_MODELLED),
    )


_serialized = methodcaller("SerializeToString")


def fragments_from_pb(pbs: Iterable[tpb.DataFragment]) -> tuple[Fragment, ...]:
    messages = list(pbs)
    keys = list(map(_serialized, messages))
    out: list[Fragment | None] = list(map(_DECODED.get, keys))
    for i, frag in enumerate(out):
        if frag is None:  # a fragment this process has not decoded yet
            frag = out[i] = fragment_from_pb(messages[i])
            _remember(_DECODED, keys[i], frag)
            _remember(_ENCODED, id(frag), (frag, keys[i]))
    return tuple(out)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------
# manifest

_MANIFEST_MODELLED = (
    "fields",
    "fragments",
    "version",
    "schema_metadata",
    "index_section",
    "timestamp",
    "reader_feature_flags",
    "writer_feature_flags",
    "max_fragment_id",
    "transaction_file",
    "writer_version",
    "next_row_id",
    "data_format",
    "config",
    "table_metadata",
    # file offsets into the file being decoded: meaningless once it is re-laid out
    "legacy_transaction_section",
    "transaction_section",
    "max_allocated_field_id",
)


def manifest_to_pb(
    m: Manifest, *, index_offset: int | None, transaction_offset: int | None
) -> tpb.Manifest:
    check_encodable(m)
    pb = tpb.Manifest()
    fields_to_pb(pb.fields, m.schema)
    fragments_to_pb(pb.fragments, m.fragments)
    pb.version = m.version
    metadata_to_pb(pb.schema_metadata, m.schema.metadata)
    if index_offset is not None:
        pb.index_section = index_offset
    if m.timestamp_ns is not None:
        pb.timestamp.seconds, pb.timestamp.nanos = divmod(m.timestamp_ns, _NS)
    pb.reader_feature_flags = m.reader_feature_flags
    pb.writer_feature_flags = m.writer_feature_flags
    if m.max_fragment_id is not None:
        pb.max_fragment_id = m.max_fragment_id
    pb.transaction_file = m.transaction_file
    if m.writer_version != _NO_WRITER_VERSION:
        wv = pb.writer_version
        wv.SetInParent()
        wv.library = m.writer_version.library
        wv.version = m.writer_version.version
        if m.writer_version.prerelease is not None:
            wv.prerelease = m.writer_version.prerelease
        if m.writer_version.build_metadata is not None:
            wv.build_metadata = m.writer_version.build_metadata
    pb.next_row_id = m.next_row_id
    pb.data_format.file_format, pb.data_format.version = m.data_format
    str_map_to_pb(pb.config, m.config)
    str_map_to_pb(pb.table_metadata, m.table_metadata)
    if transaction_offset is not None:
        pb.transaction_section = transaction_offset
    if m.max_allocated_field_id is not None:
        pb.max_allocated_field_id = m.max_allocated_field_id
    if m.passthrough:
        pb.MergeFromString(m.passthrough)
    return pb


def _infer_data_format(fragments: Sequence[Fragment]) -> tuple[str, str]:
    # manifests from before `data_format` existed: v2 files mean "2.0", else legacy
    for frag in fragments:
        for d in frag.files:
            return ("lance", "2.0") if d.file_major_version >= 2 else ("lance", "0.1")
    return ("lance", "0.1")


def fragment_from_bytes(data: bytes) -> Fragment:
    """The fragment serialized as ``data`` (decoded once per process)."""
    frag = _DECODED.get(data)
    if frag is None:
        frag = fragment_from_pb(tpb.DataFragment.FromString(data))
        _remember(_DECODED, data, frag)
        _remember(_ENCODED, id(frag), (frag, data))
    return frag


def manifest_from_pb(
    pb: tpb.Manifest,
    index_section: bytes | None,
    legacy_dictionary_data: bytes = b"",
    raw: bytes | None = None,
) -> Manifest:
    """``raw``, the message's bytes, lets unchanged fragments be reused (see ``_fragments``)."""
    if raw is None:
        fragments = fragments_from_pb(pb.fragments)
    else:
        fragments = fragments_of(raw, pb, fragment_from_bytes, fragments_from_pb)
    writer_version = _NO_WRITER_VERSION
    if pb.HasField("writer_version"):
        wv = pb.writer_version
        writer_version = WriterVersion(
            library=wv.library,
            version=wv.version,
            prerelease=wv.prerelease if wv.HasField("prerelease") else None,
            build_metadata=wv.build_metadata if wv.HasField("build_metadata") else None,
        )
    if pb.HasField("data_format"):
        data_format = (pb.data_format.file_format, pb.data_format.version)
    else:
        data_format = _infer_data_format(fragments)
    return Manifest(
        schema=schema_from_pb(pb.fields, pb.schema_metadata),
        fragments=fragments,
        version=pb.version,
        writer_version=writer_version,
        data_format=data_format,
        reader_feature_flags=pb.reader_feature_flags,
        writer_feature_flags=pb.writer_feature_flags,
        max_fragment_id=pb.max_fragment_id if pb.HasField("max_fragment_id") else None,
        transaction_file=pb.transaction_file,
        config=str_map_from_pb(pb.config),
        table_metadata=str_map_from_pb(pb.table_metadata),
        timestamp_ns=(
            pb.timestamp.seconds * _NS + pb.timestamp.nanos if pb.HasField("timestamp") else None
        ),
        next_row_id=pb.next_row_id,
        index_section=index_section,
        max_allocated_field_id=(
            pb.max_allocated_field_id if pb.HasField("max_allocated_field_id") else None
        ),
        passthrough=rest_of(pb, _MANIFEST_MODELLED),
        legacy_dictionary_data=legacy_dictionary_data,
    )
