"""Writing an INVERTED (full-text) index in pylance 14's files (layer L3).

:func:`write_inverted` takes the documents already tokenized (a ``list<string>`` per row,
with each row's address) and writes one partition, ``part_0``, as pylance's builder does:

- ``part_0_tokens.lance``: one row, ``_token_fst_bytes`` (an ``fst``-crate map token →
  id, built by the ``ducer`` binding of that crate: byte for byte pylance's), ``_token_next_id``
  (the token count) and ``_token_total_length`` (the tokens' UTF-8 bytes);
- ``part_0_docs.lance``: per document ``_rowid`` (its row address) and ``_num_tokens``;
  schema metadata ``total_tokens``. A row without tokens (null, empty, only stop words) is
  not a document; a document's id is its row in this file;
- ``part_0_invert.lance``: per token id ``_posting`` (blocks of 128), ``_max_score``,
  ``_length`` and ``_impacts`` (:mod:`lance_semantic.fts._build_kernels` encodes them);
- ``metadata.lance``: ``deleted_fragments`` (an empty roaring bitmap) and the analyzer
  ``params`` in its schema metadata.

Token ids are given in order of first appearance, documents in the order given. Positions
(``with_position=True``) are not written yet: the caller refuses them.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, Final

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from ..codecs._kernel_cache import KernelCache
from ..codecs._kernel_gate import Kernel, KernelGate
from ..manifest import IndexEntry
from ..storage import DataFileWriter, ObjectStore

__all__ = [
    "DEFAULT_PARAMS",
    "INVERTED_DETAILS_TYPE_URL",
    "INVERTED_INDEX_VERSION",
    "KERNEL_CACHE",
    "InvertedFileWritten",
    "inverted_details",
    "is_inverted",
    "params_json",
    "write_inverted",
    "write_metadata",
    "write_partition",
    "warm_up",
    "EMPTY_BITMAP",
    "Postings",
]

INVERTED_DETAILS_TYPE_URL: Final = "/lance.table.InvertedIndexDetails"
INVERTED_INDEX_VERSION: Final = 2
_FILE_VERSION: Final = "2.2"
_BLOCK: Final = 128
_LEVEL1: Final = 32
#: pylance 14's analyzer parameters and their defaults, in the order of its ``params`` JSON
DEFAULT_PARAMS: Final[Mapping[str, Any]] = {
    "lance_tokenizer": "text",
    "base_tokenizer": "simple",
    "language": "English",
    "with_position": False,
    "max_token_length": 40,
    "lower_case": True,
    "stem": True,
    "remove_stop_words": True,
    "custom_stop_words": None,
    "ascii_folding": True,
    "min_ngram_length": 3,
    "max_ngram_length": 3,
    "prefix_only": False,
    "block_size": 128,
    "split_identifiers": False,
    "split_on_numerics": False,
    "preserve_original": False,
    "index_operators": False,
}
#: what every file of the index says of its format
_FORMAT: Final = {
    "format_version": "2",
    "posting_block_size": str(_BLOCK),
    "posting_tail_codec": "varint_delta_v1",
}
#: ... and of its positions
_POSITIONS: Final = {"positions_layout": "shared_stream_v2", "positions_codec": "packed_delta_v1"}
#: an empty roaring bitmap, portable format
EMPTY_BITMAP: Final = bytes.fromhex("3a30000000000000")

#: the disk cache of the kernels (keyed by the text of ``_build_kernels.py``)
KERNEL_CACHE = KernelCache("_build_kernels", (Path(__file__).with_name("_build_kernels.py"),))


def _load() -> ModuleType:
    return importlib.import_module("lance_semantic.fts._build_kernels")


def _warm(k: ModuleType) -> None:
    starts = np.array([0, 1], np.int64)
    one = np.ones(1, np.uint32)
    for write in (False, True):
        k.encode_positions(
            starts,
            starts,
            one,
            write,
            np.zeros(1, np.int64),
            np.zeros(16, np.uint8),
            np.zeros(1, np.uint32),
        )
        k.encode_postings(
            starts,
            np.zeros(1, np.uint32),
            one,
            one,
            1,
            write,
            np.zeros(1, np.int64),
            np.zeros(16, np.uint8),
            np.zeros(2, np.int64),
            np.zeros(16, np.uint8),
            np.zeros(1, np.float32),
        )


_GATE = KernelGate(
    _load,
    {"encode_postings": _warm},
    kernels={"encode_postings": Kernel("INVERTED index builder", 15, 1)},
    cache=KERNEL_CACHE,
    owner="full-text search",
)
_GATE.reference_bytes = 0  # no reference implementation: every build runs the kernel


def warm_up() -> dict[str, float]:
    """Load the index builder's kernel from the disk cache, or compile it there now."""
    return _GATE.warm_up()


@dataclass(frozen=True)
class InvertedFileWritten:
    path: str  # relative to the index folder
    size_bytes: int


def is_inverted(entry: IndexEntry) -> bool:
    """Whether ``entry`` is an INVERTED index of the version written (and remapped) here."""
    return (
        entry.type_url == INVERTED_DETAILS_TYPE_URL
        and entry.index_version == INVERTED_INDEX_VERSION
        and entry.base_id is None
    )


def params_json(params: Mapping[str, Any]) -> str:
    """The ``params`` JSON of ``metadata.lance``: pylance's keys in its order."""
    return json.dumps({k: params[k] for k in DEFAULT_PARAMS}, separators=(",", ":"))


def _key(out: bytearray, field: int, wire: int) -> None:
    _varint(out, field << 3 | wire)


def _varint(out: bytearray, v: int) -> None:
    while v >= 0x80:
        out.append(v & 0x7F | 0x80)
        v >>= 7
    out.append(v)


def inverted_details(params: Mapping[str, Any]) -> bytes:
    """The manifest entry's ``InvertedIndexDetails`` as pylance 14 fills it in: the base
    tokenizer, the language as a JSON string, the flags that are set, the n-gram lengths,
    the block size and the posting format (2)."""
    out = bytearray()
    for field, text in ((1, params["base_tokenizer"]), (2, json.dumps(params["language"]))):
        data = str(text).encode()
        _key(out, field, 2)
        _varint(out, len(data))
        out += data
    numbered = (
        (3, int(bool(params["with_position"]))),
        (4, params["max_token_length"] or 0),
        (5, int(bool(params["lower_case"]))),
        (6, int(bool(params["stem"]))),
        (7, int(bool(params["remove_stop_words"]))),
        (8, int(bool(params["ascii_folding"]))),
        (9, params["min_ngram_length"]),
        (10, params["max_ngram_length"]),
        (11, int(bool(params["prefix_only"]))),
    )
    for field, value in numbered:
        if value:
            _key(out, field, 0)
            _varint(out, int(value))
    for field, value in ((12, params["block_size"]), (15, 2)):
        _key(out, field, 0)
        _varint(out, int(value))
    return bytes(out)


def _not_null(*fields: tuple[str, pa.DataType]) -> list[pa.Field]:
    return [pa.field(name, dtype, nullable=False) for name, dtype in fields]


def _write(
    store: ObjectStore,
    folder: str,
    name: str,
    table: pa.Table,
    metadata: Mapping[str, str],
) -> InvertedFileWritten:
    writer = DataFileWriter(store, name, table.schema, _FILE_VERSION, folder=folder)
    for batch in table.to_batches(max_chunksize=1 << 16):
        writer.write(batch)
    for key, value in metadata.items():
        writer.add_schema_metadata(key, value)
    written = writer.close()
    return InvertedFileWritten(name, written.size_bytes)


@dataclass(frozen=True)
class Postings:
    """Every token's postings, tokens in id order: ``docs`` / ``freqs`` of token ``t`` at
    ``starts[t]:starts[t + 1]``; with positions, posting ``p``'s are
    ``positions[pos_starts[p]:pos_starts[p + 1]]``."""

    starts: npt.NDArray[np.int64]
    docs: npt.NDArray[np.uint32]
    freqs: npt.NDArray[np.uint32]
    pos_starts: npt.NDArray[np.int64] | None
    positions: npt.NDArray[np.uint32] | None


def _postings(
    token_ids: npt.NDArray[np.int64],
    doc_of: npt.NDArray[np.int64],
    n_tokens: int,
    positions: npt.NDArray[np.uint32] | None,
) -> Postings:
    width = int(doc_of[-1]) + 1 if len(doc_of) else 1
    keys = token_ids * width + doc_of
    if positions is None:
        keys.sort()
        sorted_positions = None
    else:  # the occurrences of a posting stay in document order: their positions ascend
        order = np.argsort(keys, kind="stable")
        keys = keys[order]
        sorted_positions = np.ascontiguousarray(positions[order], np.uint32)
    first = np.ones(len(keys), bool)
    first[1:] = keys[1:] != keys[:-1]
    at = np.flatnonzero(first)
    unique = keys[at]
    bounds = np.append(at, len(keys)).astype(np.int64)
    freqs = np.diff(bounds).astype(np.uint32)
    tok = unique // width
    docs = (unique - tok * width).astype(np.uint32)
    starts = np.zeros(n_tokens + 1, np.int64)
    np.cumsum(np.bincount(tok, minlength=n_tokens), out=starts[1:])
    pos_starts = None if positions is None else bounds
    return Postings(starts, docs, freqs, pos_starts, sorted_positions)


def _lists(
    ends: npt.NDArray[np.int64], data: npt.NDArray[np.uint8], per_token: npt.NDArray[np.int64]
) -> pa.ListArray:
    """A ``list<large_binary>`` of the entries ending at ``ends`` of ``data``, ``per_token``
    entries a row."""
    offsets = np.zeros(len(ends) + 1, np.int64)
    offsets[1:] = ends
    values = pa.LargeBinaryArray.from_buffers(
        pa.large_binary(), len(ends), [None, pa.py_buffer(offsets), pa.py_buffer(data)]
    )
    rows = np.zeros(len(per_token) + 1, np.int32)
    np.cumsum(per_token, out=rows[1:])
    return pa.ListArray.from_arrays(pa.array(rows, pa.int32()), values)


def _invert_table(p: Postings, doc_lens: npt.NDArray[np.uint32], total: int) -> pa.Table:
    lengths = np.diff(p.starts)
    blocks = (lengths + _BLOCK - 1) // _BLOCK
    entries = blocks + (blocks + _LEVEL1 - 1) // _LEVEL1
    n_blocks, n_entries = int(blocks.sum()), int(entries.sum())
    post_ends = np.zeros(n_blocks, np.int64)
    impact_ends = np.zeros(n_entries, np.int64)
    max_scores = np.zeros(len(lengths), np.float32)
    kernels = _GATE.kernels_for("encode_postings", 1)
    assert kernels is not None
    args = (p.starts, p.docs, p.freqs, doc_lens, total)
    none = np.zeros(0, np.uint8)
    kernels.encode_postings(*args, False, post_ends, none, impact_ends, none, max_scores)
    post = np.zeros(int(post_ends[-1]) if n_blocks else 0, np.uint8)
    impacts = np.zeros(int(impact_ends[-1]) if n_entries else 0, np.uint8)
    kernels.encode_postings(*args, True, post_ends, post, impact_ends, impacts, max_scores)
    listed = pa.list_(pa.field("item", pa.large_binary()))
    fields = [
        ("_posting", listed),
        ("_max_score", pa.float32()),
        ("_length", pa.uint32()),
        ("_impacts", listed),
    ]
    columns = [
        _lists(post_ends, post, blocks),
        pa.array(max_scores, pa.float32()),
        pa.array(lengths.astype(np.uint32), pa.uint32()),
        _lists(impact_ends, impacts, entries),
    ]
    if p.positions is not None and p.pos_starts is not None:
        fields += [
            ("_compressed_position", pa.large_binary()),
            ("_position_block_offset", pa.list_(pa.field("item", pa.uint32()))),
        ]
        columns += _position_columns(kernels, p, blocks, n_blocks)
    return pa.Table.from_arrays(columns, schema=pa.schema(_not_null(*fields)))


def _position_columns(
    kernels: ModuleType, p: Postings, blocks: npt.NDArray[np.int64], n_blocks: int
) -> list[pa.Array]:
    """``_compressed_position`` and ``_position_block_offset`` of every token."""
    n_tokens = len(p.starts) - 1
    ends = np.zeros(n_tokens, np.int64)
    offsets = np.zeros(n_blocks, np.uint32)
    none = np.zeros(0, np.uint8)
    args = (p.starts, p.pos_starts, p.positions)
    kernels.encode_positions(*args, False, ends, none, offsets)
    data = np.zeros(int(ends[-1]) if n_tokens else 0, np.uint8)
    kernels.encode_positions(*args, True, ends, data, offsets)
    starts = np.zeros(n_tokens + 1, np.int64)
    starts[1:] = ends
    streams = pa.LargeBinaryArray.from_buffers(
        pa.large_binary(), n_tokens, [None, pa.py_buffer(starts), pa.py_buffer(data)]
    )
    rows = np.zeros(n_tokens + 1, np.int32)
    np.cumsum(blocks, out=rows[1:])
    block_offsets = pa.ListArray.from_arrays(pa.array(rows, pa.int32()), pa.array(offsets))
    return [streams, block_offsets]


def _token_table(dictionary: pa.Array) -> pa.Table:
    import ducer  # the fst crate's builder (pylance's token maps are its output)

    order = pc.sort_indices(dictionary).to_numpy()
    keys = dictionary.take(pa.array(order)).cast(pa.binary()).to_pylist()
    fst = bytes(ducer.Map.build(":memory:", zip(keys, order.tolist(), strict=True)))
    total = pc.sum(pc.binary_length(dictionary)).as_py() or 0
    schema = pa.schema(
        _not_null(
            ("_token_fst_bytes", pa.large_binary()),
            ("_token_next_id", pa.uint32()),
            ("_token_total_length", pa.uint64()),
        )
    )
    return pa.Table.from_pydict(
        {
            "_token_fst_bytes": [fst],
            "_token_next_id": [len(dictionary)],
            "_token_total_length": [total],
        },
        schema=schema,
    )


def write_inverted(
    store: ObjectStore,
    folder: str,
    addresses: npt.NDArray[np.uint64],
    tokens: pa.ListArray | pa.LargeListArray,
    params: Mapping[str, Any],
    positions: pa.ListArray | pa.LargeListArray | None = None,
    *,
    partition: int = 0,
    partitions: Sequence[int] | None = None,
    deleted_fragments: bytes = EMPTY_BITMAP,
) -> list[InvertedFileWritten]:
    """Write the index files of the documents ``tokens`` (row ``i`` is the row at address
    ``addresses[i]``, in the order the index lists them) into ``folder``; the files
    written, as the manifest entry lists them. ``positions`` (``params["with_position"]``):
    each token's position in its document, as ``tokens`` (every word counted, dropped
    ones included). ``partition`` numbers the files (``part_<n>_*.lance``); ``partitions``
    are those ``metadata.lance`` lists (default ``[partition]``; an index extended by
    optimize keeps its partitions' files and adds one), ``deleted_fragments`` its bitmap."""
    counts = pc.fill_null(pc.list_value_length(tokens), 0).to_numpy().astype(np.int64)
    kept = counts > 0
    doc_lens = counts[kept].astype(np.uint32)
    row_ids = np.asarray(addresses, np.uint64)[kept]
    flat = pc.list_flatten(tokens)
    if pa.types.is_large_string(flat.type):
        flat = flat.cast(pa.string())
    encoded = pc.dictionary_encode(flat)
    if isinstance(encoded, pa.ChunkedArray):
        encoded = encoded.combine_chunks()
    dictionary = encoded.dictionary
    token_ids = encoded.indices.to_numpy().astype(np.int64)
    doc_of = np.repeat(np.arange(len(doc_lens), dtype=np.int64), doc_lens)
    listed = list(partitions) if partitions is not None else [partition]
    with_position = bool(params["with_position"])
    if not len(doc_lens):  # no documents: no partition of them, as pylance writes it
        listed = [p for p in listed if p != partition]
        meta = write_metadata(store, folder, params, listed, deleted_fragments, False)
        return [meta]
    flat_positions = None
    if with_position:
        if positions is None:
            raise ValueError("write_inverted: with_position needs the tokens' positions")
        flat_positions = pc.list_flatten(positions).to_numpy().astype(np.uint32)
        if len(flat_positions) != len(token_ids):
            raise ValueError("write_inverted: positions and tokens differ in length")
    postings = _postings(token_ids, doc_of, len(dictionary), flat_positions)
    files = write_partition(store, folder, partition, postings, row_ids, doc_lens, dictionary)
    files.append(write_metadata(store, folder, params, listed, deleted_fragments, with_position))
    return files


def write_partition(
    store: ObjectStore,
    folder: str,
    partition: int,
    postings: Postings,
    row_ids: npt.NDArray[np.uint64],
    doc_lens: npt.NDArray[np.uint32],
    dictionary: pa.Array,
) -> list[InvertedFileWritten]:
    """The three files of partition ``partition``: ``postings`` by token id (token ``t`` is
    ``dictionary[t]``), document ``d`` the row at ``row_ids[d]`` with ``doc_lens[d]``
    tokens; positions when ``postings`` holds them."""
    total = int(doc_lens.sum())
    invert = _invert_table(postings, doc_lens, total)
    formats = dict(_FORMAT)
    if postings.positions is not None:
        formats.update(_POSITIONS)
    part = f"part_{partition}"
    files = [
        _write(store, folder, f"{part}_invert.lance", invert, formats),
        _write(store, folder, f"{part}_tokens.lance", _token_table(dictionary), {}),
    ]
    docs = pa.Table.from_arrays(
        [pa.array(row_ids, pa.uint64()), pa.array(doc_lens, pa.uint32())],
        schema=pa.schema(_not_null(("_rowid", pa.uint64()), ("_num_tokens", pa.uint32()))),
    )
    files.append(_write(store, folder, f"{part}_docs.lance", docs, {"total_tokens": str(total)}))
    return files


def write_metadata(
    store: ObjectStore,
    folder: str,
    params: Mapping[str, Any],
    partitions: Sequence[int],
    deleted_fragments: bytes,
    with_position: bool,
) -> InvertedFileWritten:
    """``metadata.lance``: the deleted fragments' bitmap, the partitions, the analyzer."""
    described = {
        "partitions": json.dumps(list(partitions), separators=(",", ":")),
        "token_set_format": "fst",
        "params": params_json(params),
        **_FORMAT,
    }
    if with_position:
        described.update(_POSITIONS)
    meta = pa.Table.from_arrays(
        [pa.array([deleted_fragments], pa.binary())],
        schema=pa.schema(_not_null(("deleted_fragments", pa.binary()))),
    )
    return _write(store, folder, "metadata.lance", meta, described)
