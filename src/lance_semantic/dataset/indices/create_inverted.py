"""``Dataset.create_scalar_index(column, "INVERTED" | "FTS", ...)``: a full-text index in
pylance 14's files (layer L5).

The build reads the column once with the rows' addresses (deleted rows are not indexed),
tokenizes every row with the index's analyzer (:mod:`lance_semantic.fts.tokenize`, pylance's
defaults: the ``simple`` tokenizer, tokens of 40 bytes or more dropped, lower case, English
stemming, English stop words removed, ASCII folding) and writes one partition
(:func:`lance_semantic.fts.write_inverted`); one ``CreateIndex`` transaction commits the entry
(``/lance.table.InvertedIndexDetails``, ``index_version`` 2, the analyzer in its details,
name ``<column>_idx``, every fragment of the version) and removes an index of the same name
(``replace=True``). pylance lists, searches and maintains the index as its own; so does
lance-semantic, on legacy and flagged tables alike (on a flagged table the column is read in
the semantic type's default layout, whatever its data files hold).

As pylance 14: an unknown option is its ``ValueError``; a column that holds no strings its
``TypeError`` naming the column; ``with_position`` and the flags must be bools;
``train=False`` commits an empty index. Not here yet (``NotSupportedYetError``): list and
JSON columns, the ``ngram`` / ``jieba`` / ``lindera`` / ``icu`` tokenizers, languages other
than English with stemming or stop words, ``block_size`` other than 128, and
``fragment_ids`` (pylance's distributed build).
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from typing import Any, Final

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from ...errors import CorruptTableError, NotSupportedYetError
from ...fts import inverted_write
from ...fts.inverted_write import (
    DEFAULT_PARAMS,
    EMPTY_BITMAP,
    INVERTED_DETAILS_TYPE_URL,
    INVERTED_INDEX_VERSION,
    inverted_details,
    is_inverted,
)
from ...fts.tokenize import Analyzer
from ...manifest import (
    Fragment,
    IndexEntry,
    IndexFile,
    Manifest,
)
from ...read import ScanRequest, plan_scan, run_scan
from ...scalar.files import IndexFile as IndexFileReader
from ...storage import UncommittedFiles
from ...types.layouts import default_output_encoding
from ..core import Snapshot
from .commit_index import commit_new_index

__all__ = [
    "build_inverted_index",
    "create_inverted_index",
    "extend_inverted_index",
    "inverted_params",
    "is_inverted",
    "params_of",
]

#: the options pylance 14 takes for INVERTED besides the analyzer's parameters
_IGNORED: Final = ("format_version", "document_granularity", "memory_limit", "num_workers")
_BOOLS: Final = (
    "with_position",
    "lower_case",
    "stem",
    "remove_stop_words",
    "ascii_folding",
    "prefix_only",
    "split_identifiers",
    "split_on_numerics",
    "preserve_original",
    "index_operators",
)
_TOKENIZERS: Final = ("simple", "whitespace", "raw")
_NOT_YET_TOKENIZERS: Final = ("ngram", "icu", "code", "jieba", "lindera")
_BATCH: Final = 1 << 14


def inverted_params(options: Mapping[str, Any]) -> dict[str, Any]:
    """The analyzer parameters of ``options`` (pylance's names) over pylance's defaults,
    checked as pylance checks them; what is not implemented here is refused by name."""
    params = dict(DEFAULT_PARAMS)
    for key, value in options.items():
        if key in _IGNORED:
            continue
        if key == "progress_callback":
            if value is not None:
                raise NotSupportedYetError("create_scalar_index: progress_callback")
            continue
        if key not in params or key == "lance_tokenizer":
            raise ValueError(f"unknown FTS index parameter '{key}'")
        if key in _BOOLS and not isinstance(value, bool):
            raise TypeError(f"'{type(value).__name__}' object is not an instance of 'bool'")
        params[key] = value
    base = params["base_tokenizer"]
    if not isinstance(base, str):
        raise TypeError(f"base_tokenizer must be a str, got {type(base).__name__}")
    if base.split("/")[0] in _NOT_YET_TOKENIZERS:
        raise NotSupportedYetError(f"create_scalar_index: base_tokenizer {base!r}")
    if base not in _TOKENIZERS:
        raise ValueError(f"Invalid user input: unknown base tokenizer {base}")
    if params["language"] != "English" and (params["stem"] or params["remove_stop_words"]):
        raise NotSupportedYetError(
            f"create_scalar_index: language {params['language']!r} with stemming or stop "
            "words (English only)"
        )
    if params["block_size"] != 128:
        raise NotSupportedYetError(
            f"create_scalar_index: block_size {params['block_size']} (posting blocks of 128)"
        )
    length = params["max_token_length"]
    if length is not None and (isinstance(length, bool) or not isinstance(length, int)):
        raise TypeError(f"max_token_length must be an int or None, got {type(length).__name__}")
    stop = params["custom_stop_words"]
    if stop is not None:
        if not isinstance(stop, (list, tuple)) or not all(isinstance(w, str) for w in stop):
            raise TypeError("custom_stop_words must be a list of str")
        params["custom_stop_words"] = list(stop)
    return params


def _text_column(snap: Snapshot, column: str) -> tuple[int, dict[str, str] | None]:
    """The column's field id and the output encodings that read it as ``string`` (flagged
    tables); pylance's errors for a column that is missing or holds no strings."""
    if column not in snap.schema.names:
        raise KeyError(f"{column} not found in schema")
    field = next(f for f in snap.semantic_schema if f.path == column)
    encodings: dict[str, str] | None = None
    if snap.semantic_types:
        default = default_output_encoding(field.semantic_type)
        encodings = {column: default} if default is not None else None
    request = ScanRequest(columns=[column], output_encodings=encodings)
    plan = plan_scan(snap.semantic_schema, request, flagged=snap.semantic_types)
    read_type = plan.output_schema.field(column).type
    if pa.types.is_list(read_type) or pa.types.is_large_list(read_type):
        if pa.types.is_string(read_type.value_type) or pa.types.is_large_string(
            read_type.value_type
        ):
            raise NotSupportedYetError(
                f"create_scalar_index: an INVERTED index on the list column {column}"
            )
    if not (pa.types.is_string(read_type) or pa.types.is_large_string(read_type)):
        raise TypeError(
            f"INVERTED index column {column} must be string, large string or list of "
            f"strings, or json, but got {read_type}"
        )
    return field.id, encodings


def _documents(
    snap: Snapshot,
    column: str,
    encodings: dict[str, str] | None,
    fragments: Sequence[Fragment] | None = None,
) -> tuple[pa.Array, npt.NDArray[np.uint64]]:
    """The column's strings over every live row of ``fragments`` (default: all), and
    their row addresses (table order)."""
    request = ScanRequest(
        columns=[column], with_row_address=True, batch_size=_BATCH, output_encodings=encodings
    )
    plan = plan_scan(snap.semantic_schema, request, flagged=snap.semantic_types)
    texts: list[pa.Array] = []
    addresses: list[npt.NDArray[np.uint64]] = []
    chosen = snap.manifest.fragments if fragments is None else fragments
    for batch in run_scan(snap.store, snap.semantic_schema, chosen, plan, request):
        arr = batch.column(column)
        texts.append(arr.cast(pa.large_string()) if arr.type != pa.large_string() else arr)
        addresses.append(np.asarray(batch.column("_rowaddr").to_numpy(), np.uint64))
    if not texts:
        return pa.array([], pa.large_string()), np.empty(0, np.uint64)
    return pa.concat_arrays(texts), np.concatenate(addresses)


def create_inverted_index(
    snap: Snapshot,
    column: str,
    index_name: str,
    *,
    replace: bool,
    train: bool,
    fragment_ids: Sequence[int] | None,
    index_uuid: str | None,
    options: Mapping[str, Any],
) -> tuple[Manifest, None]:
    """Build and commit the index; the new manifest (see ``Dataset.create_scalar_index``)."""
    params = inverted_params(options)
    if fragment_ids is not None:
        raise NotSupportedYetError("create_scalar_index: fragment_ids for an INVERTED index")
    _text_column(snap, column)
    manifest = commit_new_index(
        snap,
        index_name,
        replace,
        index_uuid,
        lambda files, uuid: build_inverted_index(
            snap, files, column, index_name, uuid, params, train
        ),
    )
    return manifest, None


def build_inverted_index(
    snap: Snapshot,
    files: UncommittedFiles,
    column: str,
    name: str,
    uuid: str,
    params: Mapping[str, Any],
    train: bool = True,
) -> IndexEntry:
    """Write the files of an INVERTED index named ``name`` over ``column`` (every fragment
    of the snapshot; none without ``train``) into ``_indices/<uuid>/``, each registered in
    ``files``; its entry, uncommitted."""
    field_id, encodings = _text_column(snap, column)
    if train:
        texts, addresses = _documents(snap, column, encodings)
        fragments = tuple(sorted(f.id for f in snap.manifest.fragments))
    else:
        texts, addresses, fragments = pa.array([], pa.large_string()), np.empty(0, np.uint64), ()
    tokens, positions = Analyzer(params).tokenize_array(texts, positions=params["with_position"])
    folder = f"_indices/{uuid}"
    for part in ("part_0_invert", "part_0_tokens", "part_0_docs", "metadata"):
        files.add(f"{folder}/{part}.lance")
    written = inverted_write.write_inverted(
        snap.store, folder, addresses, tokens, params, positions
    )
    return IndexEntry(
        uuid=uuid,
        name=name,
        fields=(field_id,),
        dataset_version=snap.version,
        fragment_ids=fragments,
        type_url=INVERTED_DETAILS_TYPE_URL,
        details=inverted_details(params),
        index_version=INVERTED_INDEX_VERSION,
        created_at_ms=int(time.time() * 1000),
        base_id=None,
        files=tuple(IndexFile(f.path, f.size_bytes) for f in written),
    )


def extend_inverted_index(
    snap: Snapshot, files: UncommittedFiles, column: str, last: IndexEntry, uuid: str
) -> IndexEntry:
    """``last`` brought over every fragment as pylance 14's ``optimize_indices`` does: a
    new index (``uuid``) holding ``last``'s partitions as they are (their documents and
    statistics, deleted rows included: pylance's scores do not change with deletions) and
    one partition more of the live rows of the fragments ``last`` does not cover."""
    old = f"_indices/{last.uuid}"
    folder = f"_indices/{uuid}"
    reader = IndexFileReader(snap.store, f"{old}/metadata.lance")
    meta = reader.schema_metadata()
    try:
        partitions = [int(p) for p in json.loads(meta.get(b"partitions", b"[0]"))]
    except (ValueError, TypeError) as e:
        raise CorruptTableError(snap.store.uri(f"{old}/metadata.lance"), str(e)) from e
    deleted = reader.read_all().column("deleted_fragments")[0].as_py() or EMPTY_BITMAP
    copied: list[IndexFile] = []
    for p in partitions:
        for part in ("invert", "tokens", "docs"):
            name = f"part_{p}_{part}.lance"
            data = snap.store.get(f"{old}/{name}")
            files.add(f"{folder}/{name}")
            snap.store.put(f"{folder}/{name}", data)
            copied.append(IndexFile(name, len(data)))
    covered = set(last.fragment_ids)
    fresh = [f for f in snap.manifest.fragments if f.id not in covered]
    field_id, encodings = _text_column(snap, column)
    params = params_of(snap, last)
    texts, addresses = _documents(snap, column, encodings, fresh)
    tokens, positions = Analyzer(params).tokenize_array(texts, positions=params["with_position"])
    new = max(partitions, default=-1) + 1
    for part in ("invert", "tokens", "docs"):
        files.add(f"{folder}/part_{new}_{part}.lance")
    files.add(f"{folder}/metadata.lance")
    written = inverted_write.write_inverted(
        snap.store,
        folder,
        addresses,
        tokens,
        params,
        positions,
        partition=new,
        partitions=[*partitions, new],
        deleted_fragments=deleted,
    )
    return IndexEntry(
        uuid=uuid,
        name=last.name,
        fields=(field_id,),
        dataset_version=snap.version,
        fragment_ids=tuple(sorted(covered | {f.id for f in fresh})),
        type_url=INVERTED_DETAILS_TYPE_URL,
        details=last.details,
        index_version=INVERTED_INDEX_VERSION,
        created_at_ms=int(time.time() * 1000),
        base_id=None,
        files=tuple(copied + [IndexFile(f.path, f.size_bytes) for f in written]),
    )


def params_of(snap: Snapshot, entry: IndexEntry) -> dict[str, Any]:
    """The analyzer parameters an INVERTED index was built with (its ``metadata.lance``'s
    ``params`` JSON, pylance's or ours), for a build of the same index again."""
    rel = f"_indices/{entry.uuid}/metadata.lance"
    meta = IndexFileReader(snap.store, rel).schema_metadata()
    raw = meta.get(b"params")
    try:
        value = json.loads(raw) if raw is not None else {}
        if not isinstance(value, dict):
            raise ValueError("params is not a JSON object")
    except ValueError as e:
        raise CorruptTableError(snap.store.uri(rel), f"cannot read params: {e}") from e
    return {**DEFAULT_PARAMS, **{k: v for k, v in value.items() if k in DEFAULT_PARAMS}}
