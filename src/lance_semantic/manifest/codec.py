"""Bytes <-> model for manifest files and transactions (layer L3; docs/format/lance-format-facts.md
§2, §3, §8).

A manifest file, as pylance 14 writes it (all framing integers little-endian)::

    [u32 len | IndexSection]      optional; Manifest.index_section (field 6) = its offset
    [u32 len | Transaction]       the inline transaction; Manifest field 23 = its offset
    [u32 len | Manifest]
    [i64 offset of the Manifest's u32 length][i16 0][i16 2]["LANC"]

The inline transaction bytes are identical to the ``_transactions/*.txn`` file, which holds
the bare ``Transaction`` message (no prefix, no footer).
"""

from __future__ import annotations

import struct

from google.protobuf.message import DecodeError, Message
from google.protobuf.unknown_fields import UnknownFieldSet

from ..errors import CorruptManifestError
from ._convert import _FRAGMENT_MODELLED, DecodeProblem, manifest_from_pb, manifest_to_pb
from ._pb import lance_table_pb2 as tpb
from ._pb import lance_transaction_pb2 as xpb
from ._txn import transaction_from_pb, transaction_to_pb
from ._wire import message_fields
from .model import Manifest, Transaction

__all__ = [
    "MAGIC",
    "FOOTER_VERSION",
    "FOOTER_SIZE",
    "encode_manifest_file",
    "decode_manifest_file",
    "read_inline_transaction",
    "encode_transaction",
    "decode_transaction",
    "manifest_region",
    "fragment_passthrough",
]

MAGIC = b"LANC"
#: (major, minor) written in every manifest footer by pylance 14
FOOTER_VERSION = (0, 2)
_FOOTER = struct.Struct("<qhh4s")
#: bytes after the Manifest message: i64 offset, i16 major, i16 minor, magic
FOOTER_SIZE = _FOOTER.size
_U32 = struct.Struct("<I")


def _prefixed(body: bytes) -> bytes:
    return _U32.pack(len(body)) + body


def encode_manifest_file(manifest: Manifest, transaction: Transaction | None = None) -> bytes:
    """The bytes of a ``_versions/*.manifest`` file holding ``manifest``.

    Parameters
    ----------
    manifest
        The manifest. Its ``legacy_dictionary_data`` (normally empty) is written first,
        then its ``index_section`` (if any).
    transaction
        The transaction that created this version, embedded after the index section
        (Manifest field 23 points at it). ``None`` writes no inline transaction.

    Raises
    ------
    NotSupportedYetError
        If the schema points at legacy (0.1) dictionary values but the manifest carries
        no ``legacy_dictionary_data``.
    """
    out = bytearray(manifest.legacy_dictionary_data)
    index_offset = None
    if manifest.index_section is not None:
        index_offset = len(out)
        out += _prefixed(manifest.index_section)
    transaction_offset = None
    if transaction is not None:
        transaction_offset = len(out)
        out += _prefixed(encode_transaction(transaction))
    pb = manifest_to_pb(manifest, index_offset=index_offset, transaction_offset=transaction_offset)
    position = len(out)
    out += _prefixed(pb.SerializeToString())
    out += _FOOTER.pack(position, FOOTER_VERSION[0], FOOTER_VERSION[1], MAGIC)
    return bytes(out)


def manifest_region(data: bytes, path: str = "") -> tuple[int, int]:
    """``(start, end)`` of the Manifest protobuf message inside a manifest file.

    Raises
    ------
    CorruptManifestError
        If the footer or the length prefix is inconsistent with the file size.
    """
    size = len(data)
    if size < FOOTER_SIZE + _U32.size:
        raise CorruptManifestError(path, f"file too small for a manifest ({size} bytes)")
    position, _major, _minor, magic = _FOOTER.unpack_from(data, size - FOOTER_SIZE)
    if magic != MAGIC:
        raise CorruptManifestError(path, f"bad magic {magic!r} (expected {MAGIC!r})")
    end = size - FOOTER_SIZE
    if position < 0 or position + _U32.size > end:
        raise CorruptManifestError(
            path, f"manifest offset {position} outside the file ({size} bytes)"
        )
    (length,) = _U32.unpack_from(data, position)
    start = position + _U32.size
    if start + length != end:
        raise CorruptManifestError(
            path,
            f"manifest length {length} at offset {position} does not end at the footer "
            f"(offset {end})",
        )
    return start, end


def _section(data: bytes, offset: int, limit: int, what: str, path: str) -> bytes:
    if offset + _U32.size > limit:
        raise CorruptManifestError(path, f"{what} offset {offset} outside the file")
    (length,) = _U32.unpack_from(data, offset)
    start = offset + _U32.size
    if start + length > limit:
        raise CorruptManifestError(
            path, f"{what} at offset {offset} with length {length} overruns the manifest"
        )
    return bytes(data[start : start + length])


def _parse_manifest_pb(data: bytes, path: str) -> tuple[tpb.Manifest, int]:
    pb, limit, _ = _parse_manifest_message(data, path)
    return pb, limit


def _parse_manifest_message(data: bytes, path: str) -> tuple[tpb.Manifest, int, bytes]:
    """The parsed Manifest, the offset of its length prefix, and its bytes."""
    start, end = manifest_region(data, path)
    pb = tpb.Manifest()
    raw = bytes(data[start:end])
    try:
        pb.ParseFromString(raw)
    except DecodeError as e:
        raise CorruptManifestError(path, f"cannot decode Manifest message: {e}") from e
    _refuse_unknown_fields(pb, path)
    return pb, start - _U32.size, raw


#: messages that decide which rows a read returns, and schema fields: a field number that
#: pylance 14 does not define is refused there too (elsewhere kept, for newer writers)
_STRICT_MESSAGES = frozenset(
    {
        "lance.table.DataFragment",
        "lance.table.DataFile",
        "lance.table.DeletionFile",
        "lance.file.Field",
    }
)


def _refuse_unknown_fields(pb: tpb.Manifest, path: str) -> None:
    """A field whose wire type does not match its declaration is what one flipped bit of a
    tag makes: the protobuf runtime keeps it aside as "unknown" and the field it should have
    been (a deletion file, a data file's field ids) silently disappears. Refuse it, and any
    unknown field number inside a fragment."""
    size = pb.ByteSize()
    copy = tpb.Manifest()
    copy.CopyFrom(pb)
    copy.DiscardUnknownFields()  # recursive, in the runtime: cheap for large manifests
    if copy.ByteSize() == size:
        return
    problem = _unknown_field_problem(pb, "Manifest")
    if problem is not None:
        raise CorruptManifestError(path, problem)


def _unknown_field_problem(msg: Message, where: str) -> str | None:
    declared = msg.DESCRIPTOR.fields_by_number
    strict = msg.DESCRIPTOR.full_name in _STRICT_MESSAGES
    for f in UnknownFieldSet(msg):
        if f.field_number in declared:
            return (
                f"{where}: field {f.field_number} ({declared[f.field_number].name}) has "
                f"wire type {f.wire_type}, which does not match its declaration"
            )
        if strict:
            return f"{where}: field number {f.field_number} is not defined in this message"
    for fd, value in msg.ListFields():
        if fd.message_type is None:
            continue
        items = value if fd.is_repeated else [value]
        for i, item in enumerate(items):
            problem = _unknown_field_problem(item, f"{where}.{fd.name}[{i}]")
            if problem is not None:
                return problem
    return None


def _transaction_offset(pb: tpb.Manifest) -> int | None:
    if pb.HasField("transaction_section"):
        return pb.transaction_section
    if pb.HasField("legacy_transaction_section"):
        return pb.legacy_transaction_section
    return None


def decode_manifest_file(data: bytes, path: str = "") -> Manifest:
    """The :class:`Manifest` held by the bytes of a manifest file.

    Raises
    ------
    CorruptManifestError
        For a truncated file, a wrong magic, inconsistent offsets or lengths, an
        undecodable protobuf message or a schema whose fields do not form a tree.
    """
    pb, limit, raw = _parse_manifest_message(data, path)
    index_section = None
    prefix_end = limit
    if pb.HasField("index_section"):
        index_section = _section(data, pb.index_section, limit, "index section", path)
        prefix_end = min(prefix_end, pb.index_section)
    offset = _transaction_offset(pb)
    if offset is not None:
        prefix_end = min(prefix_end, offset)
    try:
        manifest = manifest_from_pb(pb, index_section, bytes(data[:prefix_end]), raw)
    except DecodeProblem as e:
        raise CorruptManifestError(path, str(e)) from e
    return manifest


def read_inline_transaction(data: bytes, path: str = "") -> Transaction | None:
    """The transaction embedded in a manifest file (field 23, else legacy field 21), or None.

    Raises
    ------
    CorruptManifestError
        If the manifest or the embedded transaction cannot be decoded.
    """
    pb, limit = _parse_manifest_pb(data, path)
    offset = _transaction_offset(pb)
    if offset is None:
        return None
    return decode_transaction(_section(data, offset, limit, "inline transaction", path), path)


def encode_transaction(transaction: Transaction) -> bytes:
    """The bare ``Transaction`` message, as stored in ``_transactions/*.txn``."""
    data: bytes = transaction_to_pb(transaction).SerializeToString()
    return data


def decode_transaction(data: bytes, path: str = "") -> Transaction:
    """The :class:`Transaction` of a ``.txn`` file or inline transaction section.

    Raises
    ------
    CorruptManifestError
        If the bytes are not a decodable transaction.
    """
    pb = xpb.Transaction()
    try:
        pb.ParseFromString(data)
    except DecodeError as e:
        raise CorruptManifestError(path, f"cannot decode Transaction message: {e}") from e
    try:
        return transaction_from_pb(pb)
    except DecodeProblem as e:
        raise CorruptManifestError(path, str(e)) from e


def fragment_passthrough(raw: bytes, where: str = "passthrough") -> bytes:
    """``raw`` checked as a fragment's passthrough from outside (a fragment's JSON): what
    is merged into the fragment's message beside the fields it models, so it must be a
    well-formed ``DataFragment`` message with none of those (``id``, ``files``,
    ``deletion_file``, ``physical_rows``, looked for on the wire: an explicit ``id`` of 0
    would override the fragment's) and no unknown or mistyped field. Returns it as a
    manifest records it (fields in number order, repeats of a message merged); raises
    ``ValueError`` naming ``where``.

    >>> fragment_passthrough(bytes([0x2A, 0x02, 0x0A, 0x00]))  # inline_row_ids
    b'*\\x02\\n\\x00'
    >>> fragment_passthrough(bytes([0x08, 0x00]))
    Traceback (most recent call last):
    ...
    ValueError: passthrough holds field 1 (id), which the fragment itself records
    """
    declared = tpb.DataFragment.DESCRIPTOR.fields_by_number
    pb = tpb.DataFragment()
    try:
        pb.MergeFromString(raw)
        numbers = [number for number, _, _ in message_fields(raw)]
    except (DecodeError, ValueError) as e:
        raise ValueError(f"{where} is not a serialized DataFragment message: {e}") from None
    for number in numbers:
        if number in _FRAGMENT_FIELDS:
            raise ValueError(
                f"{where} holds field {number} ({declared[number].name}), which the "
                "fragment itself records"
            )
    problem = _unknown_field_problem(pb, "DataFragment")
    if problem is not None:
        raise ValueError(f"{where} is not a well-formed DataFragment message: {problem}")
    canonical: bytes = pb.SerializeToString()  # (what a manifest records: fields in order)
    return canonical


#: the numbers of the DataFragment fields a fragment models
_FRAGMENT_FIELDS = frozenset(
    tpb.DataFragment.DESCRIPTOR.fields_by_name[name].number for name in _FRAGMENT_MODELLED
)
