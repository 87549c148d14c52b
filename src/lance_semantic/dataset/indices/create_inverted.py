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

import time
import uuid as uuidlib
from collections.abc import Mapping, Sequence
from typing import Any, Final

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from ...commit import commit
from ...errors import NotSupportedYetError
from ...fts import inverted_write
from ...fts.inverted_write import (
    DEFAULT_PARAMS,
    INVERTED_DETAILS_TYPE_URL,
    INVERTED_INDEX_VERSION,
    inverted_details,
)
from ...fts.tokenize import Analyzer
from ...manifest import (
    CreateIndex,
    IndexEntry,
    IndexFile,
    Manifest,
    encode_index_entry,
    index_entries,
)
from ...read import ScanRequest, plan_scan, run_scan
from ...storage import UncommittedFiles
from ...types.layouts import default_output_encoding
from ..core import Snapshot
from .drop import raw_entries

__all__ = ["create_inverted_index", "inverted_params"]

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
    snap: Snapshot, column: str, encodings: dict[str, str] | None
) -> tuple[pa.Array, npt.NDArray[np.uint64]]:
    """The column's strings over every live row, and their row addresses (table order)."""
    request = ScanRequest(
        columns=[column], with_row_address=True, batch_size=_BATCH, output_encodings=encodings
    )
    plan = plan_scan(snap.semantic_schema, request, flagged=snap.semantic_types)
    texts: list[pa.Array] = []
    addresses: list[npt.NDArray[np.uint64]] = []
    for batch in run_scan(snap.store, snap.semantic_schema, snap.manifest.fragments, plan, request):
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
    field_id, encodings = _text_column(snap, column)
    existing = [e for e in index_entries(snap.manifest.index_section) if e.name == index_name]
    if existing and not replace:
        raise RuntimeError(
            f"Index name '{index_name}' already exists, please specify a different name or "
            "use replace=True"
        )
    analyzer = Analyzer(params)
    if train:
        texts, addresses = _documents(snap, column, encodings)
        fragments = tuple(sorted(f.id for f in snap.manifest.fragments))
    else:
        texts, addresses, fragments = pa.array([], pa.large_string()), np.empty(0, np.uint64), ()
    tokens, positions = analyzer.tokenize_array(texts, positions=params["with_position"])
    uuid = index_uuid or str(uuidlib.uuid4())
    folder = f"_indices/{uuid}"
    try:
        with UncommittedFiles(snap.store) as files:
            for name in ("part_0_invert", "part_0_tokens", "part_0_docs", "metadata"):
                files.add(f"{folder}/{name}.lance")
            written = inverted_write.write_inverted(
                snap.store, folder, addresses, tokens, params, positions
            )
            entry = IndexEntry(
                uuid=uuid,
                name=index_name,
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
            op = CreateIndex(
                new_indices=(encode_index_entry(entry),),
                removed_indices=tuple(raw_entries(snap.manifest, {e.uuid for e in existing})),
            )
            manifest = commit(snap.store, snap.manifest, op, files=files)
    except BaseException:
        snap.store.remove_empty_dir(folder)  # its files are gone (UncommittedFiles)
        raise
    return manifest, None
