"""Print the README's "pylance parity" table: every public attribute of pylance's
``lance.LanceDataset`` and what ``lance_semantic.Dataset`` has for it.

Which names exist on each side is found by introspection (``dir()`` of both classes); only
the notes are written by hand, below. ``python scripts/pylance_parity.py`` prints the table;
``--check README.md`` exits 1 when the README's table differs (tests/interop runs it). A row
says ``same`` / ``differs: how`` (we have the name) or ``not yet: why`` (we do not), or
``in progress (issue 15)`` where other work on the name is under way.
"""

from __future__ import annotations

import sys
from pathlib import Path

SAME, DIFFERS, NOT_YET, IN_PROGRESS = "same", "differs", "not yet", "in progress (issue 15)"

#: pylance name -> (status, note)
NOTES: dict[str, tuple[str, str]] = {
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
    "centroids": (NOT_YET, "vector index internals (lance-semantic builds no index)"),
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
    "commit_existing_index_segments": (NOT_YET, "no index building"),
    "config": (
        NOT_YET,
        "table config is kept through commits (`ds.manifest.config`), no accessor yet",
    ),
    "count_rows": (SAME, "`filter` as SQL or an Arrow expression; no other scanner options"),
    "create_branch": (NOT_YET, "branches"),
    "create_index": (NOT_YET, "no index building (pylance's indices are kept true and listed)"),
    "create_index_uncommitted": (NOT_YET, "no index building"),
    "create_scalar_index": (NOT_YET, "no index building"),
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
        NOT_YET,
        "row counts and sizes come from the index files; `list_indices` gives the manifest's view",
    ),
    "drop": (NOT_YET, "deleting a whole table"),
    "drop_columns": (SAME, "returns the handle"),
    "drop_index": (NOT_YET, "index management"),
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
    "index_statistics": (NOT_YET, "reads the index files"),
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
    "merge_existing_index_segments": (NOT_YET, "no index building"),
    "merge_index_metadata": (NOT_YET, "no index building"),
    "merge_insert": (
        SAME,
        "`when_matched_update_all`, `when_matched_delete`, `when_matched_fail`, "
        "`when_not_matched_insert_all`, `when_not_matched_by_source_delete`",
    ),
    "metadata": (NOT_YET, "table metadata is kept (`ds.manifest.table_metadata`), no accessor"),
    "migrate_manifest_paths_v2": (NOT_YET, "V1-named tables are read and written as V1"),
    "new_file_session": (NOT_YET, "pylance file sessions"),
    "optimize": (DIFFERS, "`compact_files` only (no `optimize_indices`)"),
    "partition_expression": (SAME, "always true"),
    "prewarm_index": (NOT_YET, "no index use"),
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
        "them; vector, full-text and `order_by` options raise `NotSupportedYetError`, tuning "
        "options are accepted and ignored",
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
        "`dataset_stats()` as pylance's; `index_stats` / `data_stats` raise "
        "`NotSupportedYetError` (they read index and data file internals)",
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


def _public(cls: type) -> list[str]:
    return sorted(n for n in dir(cls) if not n.startswith("_"))


def _shown(status: str, note: str) -> str:
    if not note:
        return status
    if status == SAME:
        return f"same ({note})"
    return f"{status}; {note}" if status == IN_PROGRESS else f"{status}: {note}"


def rows() -> list[tuple[str, str]]:
    """(name, ours) for every public ``lance.LanceDataset`` name; raises when a note is
    missing or contradicts what introspection finds."""
    import lance

    import lance_semantic as ls

    problems, out = [], []
    for name in _public(lance.LanceDataset):
        if name not in NOTES:
            problems.append(f"{name}: no note")
            continue
        status, note = NOTES[name]
        have = hasattr(ls.Dataset, name)
        if status in (SAME, DIFFERS) and not have:
            problems.append(f"{name}: marked {status!r} but lance_semantic.Dataset lacks it")
        if status == NOT_YET and have:
            problems.append(f"{name}: marked 'not yet' but lance_semantic.Dataset has it")
        out.append((name, _shown(status, note)))
    stale = sorted(set(NOTES) - set(_public(lance.LanceDataset)))
    problems.extend(f"{name}: not a pylance name" for name in stale)
    if problems:
        raise SystemExit("pylance parity notes are out of date:\n  " + "\n  ".join(problems))
    return out


def table() -> str:
    import lance

    import lance_semantic as ls

    found = rows()
    have = sum(1 for name, _ in found if hasattr(ls.Dataset, name))
    ours_only = [n for n in _public(ls.Dataset) if not hasattr(lance.LanceDataset, n)]
    lines = [
        f"pylance {lance.__version__}: {len(found)} public `LanceDataset` names; "
        f"`lance_semantic.Dataset` has {have} of them.",
        "",
        "| `lance.LanceDataset` | `lance_semantic.Dataset` |",
        "|---|---|",
        *(f"| `{name}` | {text} |" for name, text in found),
        "",
        "Only here: " + ", ".join(f"`{n}`" for n in ours_only) + ".",
    ]
    return "\n".join(lines) + "\n"


_BEGIN = "<!-- pylance-parity:begin (scripts/pylance_parity.py) -->\n"
_END = "<!-- pylance-parity:end -->\n"


def readme_table(readme: str) -> str:
    """The generated part of the README's "pylance parity" section."""
    start = readme.index(_BEGIN) + len(_BEGIN)
    return readme[start : readme.index(_END, start)]


def main(argv: list[str]) -> int:
    if argv[:1] == ["--check"]:
        readme = Path(argv[1] if len(argv) > 1 else "README.md").read_text()
        if readme_table(readme) != table():
            print("README's pylance parity table is stale: run scripts/pylance_parity.py")
            return 1
        return 0
    if argv[:1] == ["--write"]:
        path = Path(argv[1] if len(argv) > 1 else "README.md")
        readme = path.read_text()
        old = readme_table(readme)
        path.write_text(readme.replace(_BEGIN + old + _END, _BEGIN + table() + _END, 1))
        return 0
    sys.stdout.write(table())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
