"""Write ``docs/parity.md``: every public name of pylance's ``lance.LanceDataset`` and
``lance.fragment.LanceFragment``, and what ``lance_semantic.Dataset`` and
``lance_semantic.LanceFragment`` have for each.

Which names exist on each side is found by introspection (``dir()`` of the classes); only the
notes are written by hand, below. ``python scripts/pylance_parity.py`` prints the page,
``--write [PATH]`` writes it (default ``docs/parity.md``), ``--check [PATH]`` exits 1 when the
file differs from what would be written (``tests/docs/test_parity.py`` does the same). A row
says ``same`` / ``differs: how`` (we have the name) or ``not yet: why`` (we do not), or
``in progress (issue 15)`` where other work on the name is under way; a note that
contradicts the classes (``same`` for a name we lack, ``not yet`` for one we have, a name
pylance does not have, a pylance name without a note) stops the script.
"""

from __future__ import annotations

import sys
from pathlib import Path

SAME, DIFFERS, NOT_YET, IN_PROGRESS = "same", "differs", "not yet", "in progress (issue 15)"

#: ``lance.LanceDataset`` name -> (status, note)
DATASET_NOTES: dict[str, tuple[str, str]] = {
    "add_bases": (NOT_YET, "multi-base tables: base paths are kept through commits, unused"),
    "add_columns": (
        DIFFERS,
        "SQL expressions, Arrow fields / a schema (all-null columns) or a batch function; "
        "no `reader_schema` / `batch_size`; returns the handle",
    ),
    "all_files": (NOT_YET, "file listings for outside cleanup drivers"),
    "alter_columns": (
        DIFFERS,
        "rename, nullability, type (refused on an indexed column, as in pylance); on flagged "
        "tables a change within one semantic type is a metadata-only output-encoding change "
        "(`string_view` / `binary_view` included: recorded as `utf8_view` / `binary_view`); "
        "legacy tables refuse every view target, at any depth, as pylance 14 does",
    ),
    "base_paths": (NOT_YET, "multi-base tables"),
    "branches": (
        NOT_YET,
        "branches; a `(branch, version)` reference off `main` raises `NotSupportedYetError`",
    ),
    "centroids": (NOT_YET, "vector index internals (`lance_semantic.vector.open_ivf_index`)"),
    "checkout_latest": (
        DIFFERS,
        "moves the handle in place as pylance does, and returns it (pylance returns `None`)",
    ),
    "checkout_version": (
        SAME,
        "a version number, a tag name or a `(branch, version)` tuple of `main`; a missing "
        "tag raises `TagNotFoundError`, a `ValueError` and an `OSError` like pylance's errors",
    ),
    "cleanup_old_versions": (
        DIFFERS,
        "`older_than`, `retain_versions`, `delete_unverified`, `error_if_tagged_old_versions` "
        "with pylance's rules (the same files go, the same `CleanupStats`); no "
        "`delete_rate_limit`, `versions`, `delete_concurrency`",
    ),
    "commit": (
        SAME,
        "`Dataset.commit(uri, ls.LanceOperation.*, read_version=)` with the put-if-absent, "
        "rebase and conflict rules of every commit; recorded layouts checked first",
    ),
    "commit_batch": (NOT_YET, "several transactions in one commit"),
    "commit_existing_index_segments": (
        NOT_YET,
        "commit `create_index_uncommitted` segments with `LanceOperation.CreateIndex`",
    ),
    "config": (
        NOT_YET,
        "table config is kept through commits (`ds.manifest.config`), no accessor yet",
    ),
    "count_rows": (SAME, "`filter` as SQL or an Arrow expression; no other scanner options"),
    "create_branch": (NOT_YET, "branches"),
    "create_index": (
        DIFFERS,
        "IVF_FLAT / IVF_PQ / IVF_SQ over float32 vectors in pylance's files (pylance uses "
        "them); pylance's signature, its engine-only options and other index types raise "
        "`NotSupportedYetError`",
    ),
    "create_index_uncommitted": (
        SAME,
        "pylance's signature; `fragment_ids` required (its distributed build); returns an "
        "`ls.Index` with `lance.dataset.Index`'s fields, committed by "
        "`LanceOperation.CreateIndex` through either library; `rabitq_model` raises "
        "`NotSupportedYetError`",
    ),
    "create_scalar_index": (
        DIFFERS,
        "BTREE / BITMAP / LABEL_LIST / ZONEMAP / BLOOMFILTER / INVERTED in pylance's files "
        "(pylance uses them); NGRAM / RTREE / MINHASHLSH, nested fields, an `IndexConfig` and "
        "`progress_callback` raise `NotSupportedYetError`; unknown options raise `TypeError` "
        "(pylance ignores them)",
    ),
    "data_storage_version": (SAME, ""),
    "deep_clone": (NOT_YET, "clones"),
    "delete": (
        DIFFERS,
        "returns a frozen `DeleteResult`, read by attribute or by key like pylance's dict; "
        "no `conflict_retries` / `retry_timeout`",
    ),
    "delete_config_keys": (NOT_YET, "table config verbs"),
    "delta": (NOT_YET, "version diffs"),
    "describe_indices": (
        SAME,
        "`IndexDescription` / `IndexSegmentDescription` with pylance's attributes and "
        "`details` (INVERTED's details are `{}` here)",
    ),
    "drop": (NOT_YET, "deleting a whole table"),
    "drop_columns": (SAME, "returns the handle"),
    "drop_index": (SAME, "a `CreateIndex` commit removing every segment of the name"),
    "explain_cleanup_old_versions": (NOT_YET, "a dry run of cleanup"),
    "filter": (
        DIFFERS,
        "pyarrow's `Dataset.filter` raises `NotSupportedYetError`; use `to_table(filter=...)`",
    ),
    "fragment_ids": (NOT_YET, "use `[f.fragment_id for f in ds.get_fragments()]`"),
    "from_pydantic_model": (NOT_YET, "pydantic integration"),
    "get_fragment": (SAME, ""),
    "get_fragments": (DIFFERS, "no `filter` argument"),
    "get_ivf_model": (NOT_YET, "vector index internals"),
    "get_transactions": (NOT_YET, "transactions are decoded internally, not exposed"),
    "get_version": (SAME, ""),
    "has_index": (SAME, ""),
    "has_stable_row_ids": (NOT_YET, "tables with stable row ids are refused for writing"),
    "head": (SAME, "`scanner` options after `num_rows`"),
    "index_statistics": (
        SAME,
        "pylance's dictionary for IVF_FLAT / IVF_PQ / IVF_SQ, BTREE, BITMAP, LABEL_LIST "
        "(with its `DeprecationWarning`); other types raise `NotSupportedYetError`",
    ),
    "initial_storage_options": (NOT_YET, "storage option accessors"),
    "initialize_mem_wal": (NOT_YET, "MemWAL"),
    "insert": (SAME, "append / overwrite with `write_dataset`'s options"),
    "io_stats_incremental": (NOT_YET, "pylance's reader IO counters"),
    "io_stats_snapshot": (NOT_YET, "pylance's reader IO counters"),
    "join": (DIFFERS, "pyarrow's `join`, through a scan: returns an `InMemoryDataset`"),
    "join_asof": (DIFFERS, "through a scan (pylance's segfaults)"),
    "lance_schema": (NOT_YET, "`semantic_schema` is the field tree with ids (a `TableSchema`)"),
    "latest_storage_options": (NOT_YET, "storage option accessors"),
    "latest_version": (SAME, ""),
    "list_indices": (
        DIFFERS,
        "the same entries, read from the manifest; no `DeprecationWarning`; after a "
        "compaction that deferred index remapping, `fragment_ids` are the manifest's "
        "(pylance remaps them through the fragment-reuse index)",
    ),
    "max_field_id": (NOT_YET, "kept internally"),
    "mem_wal_index_details": (NOT_YET, "MemWAL"),
    "mem_wal_writer": (NOT_YET, "MemWAL"),
    "merge": (NOT_YET, "joining another table's columns (`add_columns` adds columns)"),
    "merge_existing_index_segments": (NOT_YET, "distributed index merges"),
    "merge_index_metadata": (NOT_YET, "distributed index merges"),
    "merge_insert": (
        SAME,
        "`when_matched_update_all`, `when_matched_delete`, `when_matched_fail`, "
        "`when_not_matched_insert_all`, `when_not_matched_by_source_delete`",
    ),
    "metadata": (NOT_YET, "table metadata is kept (`ds.manifest.table_metadata`), no accessor"),
    "migrate_manifest_paths_v2": (NOT_YET, "V1-named tables are read and written as V1"),
    "new_file_session": (NOT_YET, "pylance file sessions"),
    "optimize": (
        DIFFERS,
        "`compact_files`; `optimize_indices` over IVF indices with pylance's options: unset "
        "`num_indices_to_merge` writes a delta (pylance may merge and join small "
        "partitions); `retrain=True` rebuilds with pylance's partition count; scalar "
        "indices with unindexed rows raise `NotSupportedYetError`",
    ),
    "partition_expression": (SAME, "always true"),
    "prewarm_index": (NOT_YET, "partitions are read when a search probes them, then cached"),
    "read_blob_ranges": (NOT_YET, "`take_blobs` gives seekable files"),
    "read_blobs": (NOT_YET, "`take_blobs` gives seekable files"),
    "read_transaction": (NOT_YET, "transactions are decoded internally, not exposed"),
    "remap_row_addrs": (NOT_YET, "fragment-reuse index"),
    "replace_field_metadata": (NOT_YET, "metadata verbs (`set_output_encoding` is ours)"),
    "replace_schema": (DIFFERS, "raises `NotSupportedYetError`"),
    "replace_schema_metadata": (NOT_YET, "metadata verbs"),
    "restore": (SAME, "returns the handle"),
    "sample": (
        SAME,
        "Python's `random.sample` over the live rows, as pylance: `random.seed` "
        "repeats a draw, and gives pylance's rows",
    ),
    "scanner": (
        DIFFERS,
        "pylance's `LanceScanner` names; `with_row_id` / `with_row_address` as pylance numbers "
        "them; `nearest` searches through the column's IVF_FLAT / IVF_PQ / IVF_SQ index "
        "(pylance's or ours) and flat elsewhere, as pylance; `full_text_query` searches the "
        "INVERTED indices (pylance's or ours) with BM25 and flat elsewhere, as pylance "
        "(`lance_semantic.fts` query objects: pylance's are opaque); `order_by` raises "
        "`NotSupportedYetError`, tuning options are accepted and ignored",
    ),
    "schema": (SAME, "on flagged tables the output encodings are applied"),
    "schema_metadata": (NOT_YET, "in `ds.schema.metadata`"),
    "session": (NOT_YET, "pylance's cache session"),
    "shallow_clone": (NOT_YET, "clones"),
    "slice": (NOT_YET, "use `to_table(offset=..., limit=...)`"),
    "sort_by": (DIFFERS, "through a scan: returns an `InMemoryDataset` (pylance's segfaults)"),
    "sql": (NOT_YET, "SQL queries (filters and update expressions are SQL)"),
    "stats": (
        DIFFERS,
        "`dataset_stats()` and `index_stats()` as pylance's; `data_stats` raises "
        "`NotSupportedYetError` (it reads data file internals)",
    ),
    "storage_options_accessor": (NOT_YET, "storage option accessors"),
    "tags": (
        SAME,
        "`create` / `update` (a version, a tag name, `(None, version)` or the latest) / "
        "`delete` / `list` / `list_ordered` / `get_version` / `replace_metadata`, in "
        "pylance's files; tags on branches not yet",
    ),
    "take": (SAME, "plus `output_encodings`"),
    "take_blobs": (SAME, "no `buffer_size`"),
    "to_batches": (
        DIFFERS,
        "`columns`, `filter`, `limit`, `offset`, `batch_size`, `with_row_id` and the other "
        "`scanner` options, plus `output_encodings`",
    ),
    "to_pandas": (NOT_YET, "use `to_table().to_pandas()`"),
    "to_table": (
        DIFFERS,
        "`columns`, `filter`, `limit`, `offset`, `batch_size`, `with_row_id` and the other "
        "`scanner` options, plus `output_encodings`",
    ),
    "tracked_files": (NOT_YET, "file listings for outside cleanup drivers"),
    "truncate_table": (NOT_YET, "deleting every row"),
    "update": (
        DIFFERS,
        "returns a frozen `UpdateResult`, read by attribute or by key like pylance's dict; "
        "no `conflict_retries` / `retry_timeout` / `data_storage_version`",
    ),
    "update_config": (NOT_YET, "table config verbs"),
    "update_field_metadata": (NOT_YET, "metadata verbs"),
    "update_metadata": (NOT_YET, "metadata verbs"),
    "update_schema_metadata": (NOT_YET, "metadata verbs"),
    "uri": (SAME, ""),
    "validate": (NOT_YET, "`ls.check(uri)` checks a table"),
    "version": (SAME, ""),
    "version_refs": (SAME, ""),
    "versions": (
        SAME,
        "entries equal pylance's: `version`, `timestamp` (naive local "
        "datetime), `metadata` (the manifest summary)",
    ),
}

#: ``lance.fragment.LanceFragment`` name -> (status, note)
FRAGMENT_NOTES: dict[str, tuple[str, str]] = {
    "count_rows": (SAME, "`filter` as SQL or an Arrow expression"),
    "create": (
        NOT_YET,
        "use `ls.fragment.write_fragments`, which writes uncommitted fragments for "
        "`Dataset.commit`",
    ),
    "create_from_file": (NOT_YET, "registering a data file written elsewhere"),
    "data_files": (NOT_YET, "use `metadata.files`"),
    "delete": (NOT_YET, "per-fragment deletes for a two-phase `Delete`; `Dataset.delete` deletes"),
    "delete_rows": (NOT_YET, "per-fragment deletes by offset"),
    "deletion_file": (NOT_YET, "use `metadata.deletion_file`"),
    "fragment_id": (SAME, ""),
    "head": (NOT_YET, "use `to_table().slice(0, n)` or `Dataset.head`"),
    "merge": (NOT_YET, "joining another table's columns into a fragment"),
    "merge_columns": (NOT_YET, "adding columns to one fragment; `Dataset.add_columns` adds them"),
    "metadata": (SAME, "a `FragmentMetadata` with pylance's fields, `to_json` / `from_json`"),
    "num_deletions": (NOT_YET, "use `physical_rows - count_rows()`"),
    "open_session": (NOT_YET, "pylance's fragment sessions"),
    "partition_expression": (
        NOT_YET,
        "an attribute of pyarrow's `Fragment`; ours is not a pyarrow `Fragment`",
    ),
    "physical_rows": (SAME, ""),
    "physical_schema": (NOT_YET, "an attribute of pyarrow's `Fragment`; use `Dataset.schema`"),
    "scanner": (NOT_YET, "use `to_batches` / `to_table`"),
    "schema": (NOT_YET, "use `Dataset.schema`"),
    "take": (
        SAME,
        "offsets among the fragment's live rows, as in pylance; plus `output_encodings`",
    ),
    "to_batches": (
        DIFFERS,
        "`columns`, `filter`, `output_encodings`, `batch_size`, and `nearest` (a search of the "
        "fragment's rows; pylance's fragment reads have none); no `limit` / `offset` / "
        "`with_row_id` or other scanner options",
    ),
    "to_pandas": (NOT_YET, "use `to_table().to_pandas()`"),
    "to_table": (
        DIFFERS,
        "`columns`, `filter`, `output_encodings`, and `nearest` (as `to_batches`); no "
        "`limit` / `offset` / `with_row_id` or other scanner options",
    ),
    "update_columns": (NOT_YET, "rewriting columns of one fragment"),
    "validate": (NOT_YET, "`ls.check(uri)` checks the whole table"),
}


def _public(cls: type) -> list[str]:
    return sorted(n for n in dir(cls) if not n.startswith("_"))


def _shown(status: str, note: str) -> str:
    if not note:
        return status
    if status == SAME:
        return f"same ({note})"
    return f"{status}; {note}" if status == IN_PROGRESS else f"{status}: {note}"


def rows(theirs: type, ours: type, notes: dict[str, tuple[str, str]]) -> list[tuple[str, str]]:
    """(name, what ours has) for every public name of ``theirs``; raises ``SystemExit`` when
    a note is missing or contradicts what introspection finds."""
    problems, out = [], []
    for name in _public(theirs):
        if name not in notes:
            problems.append(f"{theirs.__name__}.{name}: no note")
            continue
        status, note = notes[name]
        have = hasattr(ours, name)
        if status in (SAME, DIFFERS) and not have:
            problems.append(f"{name}: marked {status!r} but {ours.__name__} lacks it")
        if status == NOT_YET and have:
            problems.append(f"{name}: marked 'not yet' but {ours.__name__} has it")
        out.append((name, _shown(status, note)))
    stale = sorted(set(notes) - set(_public(theirs)))
    problems.extend(f"{theirs.__name__}.{name}: not a pylance name" for name in stale)
    if problems:
        raise SystemExit("pylance parity notes are out of date:\n  " + "\n  ".join(problems))
    return out


def _section(
    theirs: type, their_name: str, ours: type, our_name: str, notes: dict[str, tuple[str, str]]
) -> list[str]:
    found = rows(theirs, ours, notes)
    have = sum(1 for name, _ in found if hasattr(ours, name))
    ours_only = [n for n in _public(ours) if not hasattr(theirs, n)]
    return [
        f"{len(found)} public `{their_name}` names; `{our_name}` has {have} of them.",
        "",
        f"| `{their_name}` | `{our_name}` |",
        "|---|---|",
        *(f"| `{name}` | {text} |" for name, text in found),
        "",
        "Only here: " + (", ".join(f"`{n}`" for n in ours_only) or "nothing") + ".",
    ]


def page() -> str:
    """The whole of ``docs/parity.md``."""
    import lance
    import lance.fragment

    import lance_semantic as ls

    lines = [
        "# pylance parity",
        "",
        "<!-- generated by scripts/pylance_parity.py: edit the notes there, then run",
        "     python scripts/pylance_parity.py --write -->",
        "",
        f"Every public name of pylance {lance.__version__}'s `lance.LanceDataset` and "
        "`lance.fragment.LanceFragment`, and what lance-semantic has for it. Which names "
        "exist on each side comes from `dir()` of the classes; the notes are kept in "
        "`scripts/pylance_parity.py`, which writes this page, and a test "
        "(`tests/docs/test_parity.py`) fails when the page is stale or a note contradicts "
        "the classes. Engine support (`__arrow_c_stream__`, DuckDB, Polars; see "
        "[Engines](guides/engines.md)) is not a `LanceDataset` name. Tags and "
        "`cleanup_old_versions` are described in [Versions, tags and "
        "cleanup](guides/versions.md).",
        "",
        "## `Dataset`",
        "",
        *_section(
            lance.LanceDataset,
            "lance.LanceDataset",
            ls.Dataset,
            "lance_semantic.Dataset",
            DATASET_NOTES,
        ),
        "",
        "## `LanceFragment`",
        "",
        *_section(
            lance.fragment.LanceFragment,
            "lance.fragment.LanceFragment",
            ls.LanceFragment,
            "lance_semantic.LanceFragment",
            FRAGMENT_NOTES,
        ),
    ]
    return "\n".join(lines) + "\n"


DEFAULT_PATH = Path(__file__).resolve().parents[1] / "docs" / "parity.md"


def main(argv: list[str]) -> int:
    if argv[:1] == ["--check"]:
        path = Path(argv[1]) if len(argv) > 1 else DEFAULT_PATH
        if not path.is_file() or path.read_text(encoding="utf-8") != page():
            print(f"{path} is stale: run python scripts/pylance_parity.py --write")
            return 1
        return 0
    if argv[:1] == ["--write"]:
        path = Path(argv[1]) if len(argv) > 1 else DEFAULT_PATH
        path.write_text(page(), encoding="utf-8")
        return 0
    sys.stdout.write(page())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
