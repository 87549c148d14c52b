"""Bad arguments get clear errors, and never move a table.

One table of bad calls over the public API: ``ls.dataset``, ``write_dataset``, ``upgrade``,
every public verb of ``Dataset``, ``LanceFragment`` and the merge builder, compaction and the
CLI. Each row is ``Bad(id, call, error, fragment)``: ``call(c)`` runs against a fresh copy of a
two-version table, must raise ``error`` (a ``LanceSemanticError`` subclass, or a standard
``TypeError`` / ``ValueError``) with ``fragment`` in its message (the argument's name and what
was given), and must leave the table exactly as it was: same latest version, same files with
the same bytes, nothing created at a new path. Adding a case is one line.

Where pylance 14 has the same call (``pylance=`` on a row), the interop test runs it on a
pylance table and asserts that pylance refuses it as well, with the exception family noted.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import lance
import numpy as np
import pyarrow as pa
import pytest

import lance_semantic as ls
from lance_semantic.cli.main import main as cli_main

DATA = pa.table({"id": pa.array([1, 2, 3, 4], pa.int64()), "s": ["a", "b", "c", "d"]})
ROW = pa.table({"id": pa.array([1], pa.int64()), "s": ["x"]})


@dataclass
class Ctx:
    """What a call gets: ``m`` the library (``ls`` or ``lance``), ``ds`` the table at its
    latest version (2), ``uri`` its path, ``new`` a path where no table exists."""

    m: Any
    ds: Any
    uri: str
    new: str

    @property
    def frag(self) -> Any:
        return self.ds.get_fragments()[0]


@dataclass(frozen=True)
class Bad:
    id: str
    call: Callable[[Ctx], object]
    error: type[BaseException]
    fragment: str
    #: the exception pylance 14 raises for the same call, when it has one (``None``: no
    #: such call in pylance, or it accepts it -- see the notes column)
    pylance: type[BaseException] | None = None


def _cli(*argv: str) -> Callable[[Ctx], object]:
    """Run the CLI; a non-zero exit becomes ``CliFailed`` carrying its stderr line."""

    def run(c: Ctx) -> object:
        args = [a.replace("{uri}", c.uri).replace("{new}", c.new) for a in argv]
        import contextlib
        import io

        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            try:
                code = cli_main(args)
            except SystemExit as e:  # argparse: usage errors
                code = e.code if isinstance(e.code, int) else 2
        if code:
            raise CliFailed(f"exit {code}: {err.getvalue().strip()}")
        return code

    return run


class CliFailed(Exception):
    pass


def _merge(c: Ctx) -> Any:
    return c.ds.merge_insert("id")


Lse = ls.LanceSemanticError
IE = ls.InvalidExpressionError

# fmt: off
CASES = [
    # ---- ls.dataset / checkout_version: uri and version ----------------------------------
    Bad("dataset-int-uri", lambda c: c.m.dataset(123), TypeError, "uri must be a str", TypeError),
    Bad("dataset-none-uri", lambda c: c.m.dataset(None), TypeError, "got None", ValueError),
    Bad("dataset-empty-uri", lambda c: ls.dataset(""), ValueError, "uri must not be empty"),
    Bad("dataset-bytes-uri", lambda c: ls.dataset(c.uri.encode()), TypeError, "(bytes)"),
    Bad("version-str", lambda c: c.m.dataset(c.uri, version="1"), ls.TagNotFoundError,
        "tag 1 does not exist", ValueError),
    Bad("version-str-name", lambda c: c.m.dataset(c.uri, version="v1"), ls.TagNotFoundError,
        "tag v1 does not exist", ValueError),
    Bad("version-bad-tag-name", lambda c: c.m.dataset(c.uri, version="a b"),
        ls.InvalidTagNameError, "invalid tag name 'a b'", ValueError),
    Bad("version-other-branch", lambda c: ls.dataset(c.uri, version=("dev", 1)),
        ls.NotSupportedYetError, "branches"),
    Bad("version-negative", lambda c: c.m.dataset(c.uri, version=-1), ValueError,
        "version must be at least 1, got -1", OverflowError),
    Bad("version-zero", lambda c: c.m.dataset(c.uri, version=0), ValueError,
        "version must be at least 1, got 0", ValueError),
    Bad("version-missing", lambda c: c.m.dataset(c.uri, version=99), ls.DatasetNotFoundError,
        "version 99 does not exist", ValueError),
    Bad("version-float", lambda c: c.m.dataset(c.uri, version=1.0), TypeError,
        "version must be an int version number, a tag name (str) or a (branch, version) "
        "tuple, got 1.0 (float)", OSError),
    Bad("dataset-unknown-kwarg", lambda c: c.m.dataset(c.uri, bogus=1), TypeError,
        "unexpected keyword argument 'bogus'", TypeError),
    Bad("dataset-storage-options", lambda c: c.m.dataset(c.uri, storage_options=5), TypeError,
        "storage_options must be a dict", TypeError),
    Bad("dataset-storage-option-bool",
        lambda c: c.m.dataset(c.uri, storage_options={"allow_http": True}),
        ls.InvalidStorageOptionError, "'allow_http' = True: the value must be a str", TypeError),
    Bad("dataset-storage-option-key",
        lambda c: c.m.dataset(c.uri, storage_options={1: "x"}),
        ls.InvalidStorageOptionError, "a key must be a str, not int", TypeError),
    Bad("checkout-str", lambda c: c.ds.checkout_version("1"), ls.TagNotFoundError,
        "tag 1 does not exist", OSError),
    Bad("checkout-negative", lambda c: c.ds.checkout_version(-1), ValueError, "got -1",
        OverflowError),
    Bad("checkout-missing", lambda c: c.ds.checkout_version(3), ls.DatasetNotFoundError,
        "version 3 does not exist", OSError),
    Bad("checkout-list", lambda c: c.ds.checkout_version([1]), TypeError, "got [1] (list)"),
    # ---- tags, cleanup, head / sample / get_fragment / stats ------------------------------
    Bad("tag-bad-name", lambda c: c.ds.tags.create("a/b", 1), ls.InvalidTagNameError,
        "invalid tag name 'a/b'", OSError),
    Bad("tag-empty-name", lambda c: c.ds.tags.create("", 1), ls.InvalidTagNameError,
        "cannot be empty", OSError),
    Bad("tag-lock-name", lambda c: c.ds.tags.create("x.lock", 1), ls.InvalidTagNameError,
        ".lock", OSError),
    Bad("tag-int-name", lambda c: c.ds.tags.create(1, 1), TypeError, "tag must be a str",
        TypeError),
    Bad("tag-missing-version", lambda c: c.ds.tags.create("x", 9), ls.VersionNotFoundError,
        "version 9 does not exist", ValueError),
    Bad("tag-version-zero", lambda c: c.ds.tags.create("x", 0), ValueError,
        "reference must be at least 1, got 0", ValueError),
    Bad("tag-version-float", lambda c: c.ds.tags.create("x", 1.5), TypeError,
        "got 1.5 (float)", ValueError),
    Bad("tag-missing-tag-reference", lambda c: c.ds.tags.create("x", "nope"),
        ls.TagNotFoundError, "tag nope does not exist", OSError),
    Bad("tag-update-missing", lambda c: c.ds.tags.update("nope", 1), ls.TagNotFoundError,
        "tag nope does not exist", ValueError),
    Bad("tag-delete-missing", lambda c: c.ds.tags.delete("nope"), ls.TagNotFoundError,
        "tag nope does not exist", ValueError),
    Bad("tag-get-missing", lambda c: c.ds.tags.get_version("nope"), ls.TagNotFoundError,
        "tag nope does not exist", ValueError),
    Bad("tag-metadata-int", lambda c: c.ds.tags.replace_metadata("nope", {"a": 1}), TypeError,
        "metadata['a'] must be a str, got 1 (int)", TypeError),
    Bad("tag-order", lambda c: c.ds.tags.list_ordered("up"), ValueError,
        "order must be 'asc' or 'desc'", ValueError),
    Bad("cleanup-older-than-int", lambda c: c.ds.cleanup_old_versions(older_than=5), TypeError,
        "older_than must be a datetime.timedelta, got 5 (int)", TypeError),
    Bad("cleanup-unverified-str",
        lambda c: c.ds.cleanup_old_versions(delete_unverified="yes"), TypeError,
        "delete_unverified", TypeError),
    Bad("cleanup-retain-zero", lambda c: c.ds.cleanup_old_versions(retain_versions=0),
        ValueError, "retain_versions must be at least 1, got 0", OSError),
    Bad("head-negative", lambda c: c.ds.head(-1), ValueError, "num_rows must be non-negative",
        ValueError),
    Bad("head-str", lambda c: c.ds.head("2"), TypeError, "got '2' (str)", TypeError),
    Bad("sample-too-many", lambda c: c.ds.sample(9), ValueError,
        "num_rows (9) is larger than the table's 8 rows", ValueError),
    Bad("sample-negative", lambda c: c.ds.sample(-1), ValueError,
        "num_rows must be non-negative", ValueError),
    Bad("sample-str", lambda c: c.ds.sample("1"), TypeError, "got '1' (str)", TypeError),
    Bad("get-fragment-str", lambda c: c.ds.get_fragment("0"), TypeError, "got '0' (str)",
        TypeError),
    Bad("get-fragment-negative", lambda c: c.ds.get_fragment(-1), ValueError,
        "fragment_id must be non-negative", OverflowError),
    Bad("stats-negative", lambda c: c.ds.stats.dataset_stats(-1), ValueError,
        "max_rows_per_group must be non-negative", OverflowError),
    # ---- reads: limit, offset, batch_size -----------------------------------------------
    Bad("limit-negative", lambda c: c.ds.to_table(limit=-1), ValueError,
        "limit must be non-negative, got -1", ValueError),
    Bad("offset-negative", lambda c: c.ds.to_table(offset=-1), ValueError,
        "offset must be non-negative, got -1", ValueError),
    Bad("batch-size-negative", lambda c: c.ds.to_table(batch_size=-1), ValueError,
        "batch_size must be at least 1, got -1", OverflowError),
    Bad("batch-size-zero", lambda c: c.ds.to_table(batch_size=0), ValueError,
        "batch_size must be at least 1, got 0", ValueError),
    Bad("limit-float", lambda c: c.ds.to_table(limit=1.5), TypeError,
        "limit must be an integer, got 1.5 (float)", TypeError),
    Bad("limit-str", lambda c: c.ds.to_table(limit="2"), TypeError, "got '2' (str)", TypeError),
    Bad("batches-limit-negative", lambda c: c.ds.to_batches(limit=-1), ValueError,
        "limit must be non-negative", ValueError),
    Bad("batches-batch-size-negative", lambda c: c.ds.to_batches(batch_size=-5), ValueError,
        "batch_size must be at least 1, got -5", OverflowError),
    Bad("to-table-unknown-kwarg", lambda c: c.ds.to_table(bogus=1), TypeError,
        "unexpected keyword argument 'bogus'", TypeError),
    # ---- reads: columns, filters, output encodings --------------------------------------
    Bad("columns-unknown", lambda c: c.ds.to_table(columns=["nope"]), Lse,
        "column 'nope' does not exist", ValueError),
    Bad("columns-empty-name", lambda c: c.ds.to_table(columns=[""]), Lse,
        "column '' does not exist", ValueError),
    Bad("columns-int-item", lambda c: c.ds.to_table(columns=[1]), TypeError,
        "columns[0] must be a str", TypeError),
    Bad("columns-int", lambda c: c.ds.to_table(columns=5), TypeError, "got 5 (int)", TypeError),
    Bad("columns-expr-int", lambda c: c.ds.to_table(columns={"x": 5}), TypeError,
        "columns['x'] must be a SQL expression", TypeError),
    Bad("columns-expr-bad-sql", lambda c: c.ds.to_table(columns={"x": "id + "}), IE, "id + ",
        ValueError),
    Bad("filter-int", lambda c: c.ds.to_table(filter=5), TypeError,
        "filter must be a SQL string or a pyarrow.compute.Expression, got 5 (int)"),
    Bad("filter-empty", lambda c: c.ds.to_table(filter=""), IE, "invalid SQL expression ''",
        ValueError),
    Bad("filter-not-boolean", lambda c: c.ds.to_table(filter="id + 1"), IE,
        "filter must be a boolean expression, but it gives int64", ValueError),
    Bad("filter-string-column", lambda c: c.ds.to_table(filter="s"), IE, "gives string",
        ValueError),
    Bad("filter-null", lambda c: c.ds.to_table(filter="NULL"), IE, "gives null", ValueError),
    Bad("filter-unknown-column", lambda c: c.ds.to_table(filter="nope = 1"), IE, "nope",
        ValueError),
    Bad("filter-arrow-not-boolean",
        lambda c: ls.dataset(c.uri).to_table(filter=pa.compute.field("id") + 1), IE, "gives int64"),
    Bad("batches-filter-not-boolean", lambda c: c.ds.to_batches(filter="id + 1"), IE,
        "gives int64"),
    Bad("count-rows-not-boolean", lambda c: c.ds.count_rows("id + 1"), IE, "gives int64", OSError),
    Bad("count-rows-int", lambda c: c.ds.count_rows(5), TypeError, "got 5 (int)", TypeError),
    Bad("count-rows-unknown-kwarg", lambda c: ls.dataset(c.uri).count_rows(bogus=1), TypeError,
        "bogus"),
    Bad("output-encodings-int", lambda c: c.ds.to_table(output_encodings=5), TypeError,
        "output_encodings must be a dict"),
    Bad("output-encodings-value", lambda c: c.ds.to_table(output_encodings={"s": 5}), TypeError,
        "output_encodings['s'] must be a output encoding (str), got 5 (int)"),
    Bad("output-encodings-unknown", lambda c: c.ds.to_table(output_encodings={"s": "bogus"}),
        ls.InvalidOutputEncodingError, "bogus"),
    Bad("output-encodings-no-field", lambda c: c.ds.to_table(output_encodings={"x": "utf8"}),
        ls.InvalidOutputEncodingError, "field 'x'"),
    # ---- take ---------------------------------------------------------------------------
    Bad("take-float", lambda c: c.ds.take([1.5]), TypeError,
        "indices[0] must be an integer, got 1.5 (float)", TypeError),
    Bad("take-float-later", lambda c: c.ds.take([1, 2.5]), TypeError, "indices[1]", TypeError),
    Bad("take-str", lambda c: c.ds.take(["1"]), TypeError, "got '1' (str)", TypeError),
    Bad("take-numpy-float", lambda c: c.ds.take(np.array([1.0])), TypeError,
        "numpy array of float64", TypeError),
    Bad("take-arrow-float", lambda c: ls.dataset(c.uri).take(pa.array([1.0])), TypeError,
        "Arrow array of double"),
    Bad("take-arrow-null", lambda c: c.ds.take(pa.array([1, None])), ValueError,
        "indices must not hold nulls", TypeError),
    Bad("take-negative", lambda c: c.ds.take([-1]), ValueError,
        "indices must be non-negative, got -1 at position 0", OverflowError),
    Bad("take-past-end", lambda c: c.ds.take([100]), Lse, "take index 100 is out of range",
        OSError),
    Bad("take-scalar", lambda c: c.ds.take(5), TypeError, "got 5 (int)", TypeError),
    Bad("take-none", lambda c: c.ds.take(None), TypeError, "got None", TypeError),
    Bad("take-str-arg", lambda c: ls.dataset(c.uri).take("12"), TypeError, "got '12' (str)"),
    Bad("take-unknown-column", lambda c: ls.dataset(c.uri).take([1], columns=["nope"]), Lse,
        "column 'nope' does not exist"),  # pylance 14 panics here
    Bad("take-unknown-kwarg", lambda c: c.ds.take([1], bogus=1), TypeError, "bogus", TypeError),
    Bad("take-blobs-column-int", lambda c: c.ds.take_blobs(5, indices=[0]), TypeError,
        "blob_column must be a str", TypeError),
    Bad("take-blobs-float", lambda c: c.ds.take_blobs("s", indices=[1.5]), TypeError, "indices[0]",
        TypeError),
    Bad("take-blobs-not-blob", lambda c: c.ds.take_blobs("s", indices=[0]), Lse,
        "not a blob column", ValueError),
    Bad("take-blobs-nothing", lambda c: c.ds.take_blobs("s"), ValueError, "exactly one of",
        ValueError),
    # ---- fragments ----------------------------------------------------------------------
    Bad("fragment-take-float", lambda c: c.frag.take([1.5]), TypeError, "indices[0]", TypeError),
    Bad("fragment-take-negative", lambda c: c.frag.take([-1]), ValueError, "non-negative",
        OverflowError),
    Bad("fragment-take-past-end", lambda c: c.frag.take([4]), Lse,
        "take index 4 is out of range for the"),
    Bad("fragment-filter-not-boolean", lambda c: c.frag.to_table(filter="id + 1"), IE,
        "gives int64", ValueError),
    Bad("fragment-count-not-boolean", lambda c: c.frag.count_rows("id + 1"), IE, "gives int64",
        OSError),
    Bad("fragment-batch-size-zero", lambda c: c.frag.to_batches(batch_size=0), ValueError,
        "batch_size must be at least 1, got 0", ValueError),
    Bad("fragment-batch-size-negative", lambda c: c.frag.to_batches(batch_size=-1), ValueError,
        "got -1", OverflowError),
    # ---- delete / update ----------------------------------------------------------------
    Bad("delete-none", lambda c: c.ds.delete(None), TypeError,
        "predicate must be a SQL string or a pyarrow.compute.Expression, got None", TypeError),
    Bad("delete-int", lambda c: c.ds.delete(5), TypeError, "got 5 (int)", TypeError),
    Bad("delete-empty", lambda c: c.ds.delete(""), IE, "''", OSError),
    Bad("delete-not-boolean", lambda c: c.ds.delete("id + 1"), IE, "gives int64", OSError),
    Bad("delete-unknown-column", lambda c: c.ds.delete("nope = 1"), IE, "nope", OSError),
    Bad("update-str", lambda c: c.ds.update("id = 1"), TypeError,
        "updates must be a dict of str to SQL expression (str), got 'id = 1' (str)", TypeError),
    Bad("update-none", lambda c: c.ds.update(None), TypeError, "got None", TypeError),
    Bad("update-int-value", lambda c: c.ds.update({"id": 5}), TypeError,
        "updates['id'] must be a SQL expression (str), got 5 (int)", TypeError),
    Bad("update-int-key", lambda c: c.ds.update({5: "1"}), TypeError, "keys must be str",
        TypeError),
    Bad("update-unknown-column", lambda c: c.ds.update({"nope": "1"}), Lse, "nope", ValueError),
    Bad("update-wrong-type-literal", lambda c: c.ds.update({"id": "'text'"}), IE,
        "column 'id' (int64)", ValueError),
    Bad("update-wrong-type-no-match", lambda c: c.ds.update({"id": "'text'"}, where="id = 100"), IE,
        "'text'", ValueError),
    Bad("update-wrong-type-column", lambda c: c.ds.update({"id": "s"}), IE,
        "a value does not fit column 'id' (int64)", OSError),
    Bad("update-unknown-in-expr", lambda c: c.ds.update({"id": "nope"}), IE, "nope", ValueError),
    Bad("update-where-int", lambda c: c.ds.update({"id": "1"}, where=5), TypeError,
        "where must be a SQL string", TypeError),
    Bad("update-where-not-boolean", lambda c: c.ds.update({"id": "1"}, where="id + 1"), IE,
        "gives int64", OSError),
    Bad("update-unknown-kwarg", lambda c: c.ds.update({"id": "1"}, bogus=1), TypeError, "bogus",
        TypeError),
    # ---- merge_insert -------------------------------------------------------------------
    Bad("merge-on-int", lambda c: c.ds.merge_insert(5), TypeError,
        "on must be a column name or a list of them, got 5 (int)", TypeError),
    Bad("merge-on-none", lambda c: c.ds.merge_insert(None), TypeError, "got None", ValueError),
    Bad("merge-on-empty", lambda c: c.ds.merge_insert([]), ValueError,
        "on must name at least one key column", ValueError),
    Bad("merge-on-unknown", lambda c: c.ds.merge_insert("nope"), ValueError,
        "merge key 'nope' is not a column", ValueError),
    Bad("merge-on-int-item", lambda c: c.ds.merge_insert(["id", 1]), TypeError, "got 1 (int)"),
    Bad("merge-condition-int", lambda c: _merge(c).when_matched_update_all(5), TypeError,
        "condition must be a str, got 5 (int)", TypeError),
    Bad("merge-condition-not-boolean",
        lambda c: _merge(c).when_matched_update_all("target.id + 1").execute(ROW), IE,
        "target.id + 1", OSError),
    Bad("merge-delete-expr-int", lambda c: _merge(c).when_not_matched_by_source_delete(5),
        TypeError, "expr must be a str, got 5 (int)", TypeError),
    Bad("merge-delete-not-boolean",
        lambda c: _merge(c).when_not_matched_by_source_delete("id + 1").execute(ROW), IE,
        "when_not_matched_by_source_delete must be a boolean expression", OSError),
    Bad("merge-data-int", lambda c: _merge(c).when_matched_update_all().execute(5), TypeError,
        "int", TypeError),
    Bad("merge-data-none", lambda c: _merge(c).when_matched_update_all().execute(None), TypeError,
        "NoneType", TypeError),
    Bad("merge-unknown-kwarg", lambda c: c.ds.merge_insert("id", bogus=1), TypeError, "bogus",
        TypeError),
    # ---- insert / write_dataset / upgrade -----------------------------------------------
    Bad("insert-int", lambda c: c.ds.insert(5), TypeError, "int", TypeError),
    Bad("insert-mode", lambda c: c.ds.insert(ROW, mode="bogus"), ValueError,
        "mode must be one of 'create', 'append', 'overwrite', got 'bogus'", ValueError),
    Bad("insert-unknown-kwarg", lambda c: c.ds.insert(ROW, bogus=1), TypeError, "bogus", TypeError),
    Bad("write-mode", lambda c: c.m.write_dataset(DATA, c.new, mode="bogus"), ValueError,
        "got 'bogus'", ValueError),
    Bad("write-mode-int", lambda c: ls.write_dataset(DATA, c.new, mode=1), TypeError,
        "mode must be a str, got 1 (int)"),
    Bad("write-uri-int", lambda c: c.m.write_dataset(DATA, 123), TypeError,
        "uri must be a str or os.PathLike", TypeError),
    Bad("write-uri-none", lambda c: c.m.write_dataset(DATA, None), TypeError, "got None",
        ValueError),
    Bad("write-uri-empty", lambda c: ls.write_dataset(DATA, ""), ValueError,
        "uri must not be empty"),  # pylance writes into the working directory
    Bad("write-data-int", lambda c: c.m.write_dataset(5, c.new), TypeError, "int", TypeError),
    Bad("write-max-rows-negative", lambda c: c.m.write_dataset(DATA, c.new, max_rows_per_file=-1),
        ValueError, "max_rows_per_file must be at least 1, got -1", OverflowError),
    Bad("write-max-rows-zero", lambda c: ls.write_dataset(DATA, c.new, max_rows_per_file=0),
        ValueError, "got 0"),  # pylance 14 panics (division by zero)
    Bad("write-max-rows-float", lambda c: c.m.write_dataset(DATA, c.new, max_rows_per_file=1.5),
        TypeError, "max_rows_per_file must be an integer, got 1.5", TypeError),
    Bad("write-max-rows-str", lambda c: c.m.write_dataset(DATA, c.new, max_rows_per_file="10"),
        TypeError, "got '10' (str)", TypeError),
    Bad("write-storage-version-float",
        lambda c: c.m.write_dataset(DATA, c.new, data_storage_version=2.2), TypeError,
        "data_storage_version must be a str, got 2.2 (float)", TypeError),
    Bad("write-storage-version-unknown",
        lambda c: c.m.write_dataset(DATA, c.new, data_storage_version="9.9"),
        ls.NotSupportedYetError, "'9.9'", ValueError),
    Bad("write-storage-version-empty",
        lambda c: c.m.write_dataset(DATA, c.new, data_storage_version=""), ValueError,
        "data_storage_version must not be empty", ValueError),
    Bad("write-semantic-types-str", lambda c: ls.write_dataset(DATA, c.new, semantic_types="yes"),
        TypeError, "semantic_types must be a bool, got 'yes' (str)"),
    Bad("write-semantic-types-int", lambda c: ls.write_dataset(DATA, c.new, semantic_types=1),
        TypeError, "semantic_types must be a bool, got 1 (int)"),
    Bad("write-schema-int", lambda c: ls.write_dataset(DATA, c.new, schema=5), TypeError,
        "schema must be a pyarrow.Schema"),
    Bad("write-storage-options", lambda c: c.m.write_dataset(DATA, c.new, storage_options=5),
        TypeError, "storage_options must be a dict", TypeError),
    Bad("write-storage-option-int",
        lambda c: c.m.write_dataset(DATA, c.new, storage_options={"timeout": 30}),
        ls.InvalidStorageOptionError, "'timeout' = 30: the value must be a str", TypeError),
    Bad("write-storage-option-none",
        lambda c: c.m.write_dataset(DATA, c.new, storage_options={"region": None}),
        ls.InvalidStorageOptionError, "'region' = None: the value must be a str", TypeError),
    Bad("write-unknown-kwarg", lambda c: c.m.write_dataset(DATA, c.new, bogus=1), TypeError,
        "bogus", TypeError),
    Bad("write-append-max-rows",
        lambda c: c.m.write_dataset(DATA, c.uri, mode="append", max_rows_per_file=-1), ValueError,
        "got -1", OverflowError),
    Bad("write-create-existing", lambda c: c.m.write_dataset(DATA, c.uri), ls.DatasetExistsError,
        "already exists", OSError),
    Bad("upgrade-int", lambda c: ls.upgrade(123), TypeError, "uri must be a str"),
    Bad("upgrade-empty", lambda c: ls.upgrade(""), ValueError, "uri must not be empty"),
    Bad("upgrade-unknown-kwarg", lambda c: ls.upgrade(c.uri, bogus=1), TypeError, "bogus"),
    Bad("upgrade-storage-options", lambda c: ls.upgrade(c.uri, storage_options=5), TypeError,
        "storage_options"),
    # ---- schema evolution and metadata --------------------------------------------------
    Bad("drop-unknown", lambda c: c.ds.drop_columns(["nope"]), Lse, "'nope'", ValueError),
    Bad("drop-int-item", lambda c: c.ds.drop_columns([5]), TypeError,
        "columns[0] must be a str (a column name), got 5 (int)", TypeError),
    Bad("drop-none", lambda c: c.ds.drop_columns(None), TypeError, "got None", TypeError),
    Bad("drop-all", lambda c: c.ds.drop_columns(["id", "s"]), Lse, "cannot drop all columns",
        ValueError),
    Bad("alter-unknown", lambda c: c.ds.alter_columns({"path": "nope", "name": "x"}), Lse, "'nope'",
        OSError),
    Bad("alter-duplicate-name", lambda c: c.ds.alter_columns({"path": "id", "name": "s"}), Lse,
        "duplicate field name 's'", OSError),
    Bad("alter-unknown-key", lambda c: c.ds.alter_columns({"path": "id", "bogus": 1}), TypeError,
        "unknown alteration keys: bogus", ValueError),
    Bad("alter-str", lambda c: c.ds.alter_columns("id"), TypeError,
        "an alteration must be a dict, not str", TypeError),
    Bad("alter-nullable-str", lambda c: c.ds.alter_columns({"path": "id", "nullable": "yes"}),
        TypeError, "nullable must be a bool, got 'yes' (str)", TypeError),
    Bad("alter-nullable-int", lambda c: c.ds.alter_columns({"path": "id", "nullable": 1}),
        TypeError, "nullable must be a bool, got 1 (int)", TypeError),
    Bad("alter-name-int", lambda c: c.ds.alter_columns({"path": "id", "name": 5}), TypeError,
        "name must be a str, got 5 (int)", TypeError),
    Bad("alter-data-type-str", lambda c: c.ds.alter_columns({"path": "id", "data_type": "int32"}),
        TypeError, "data_type must be a pyarrow DataType", TypeError),
    Bad("alter-path-int", lambda c: c.ds.alter_columns({"path": 5, "name": "x"}), TypeError,
        "a column path must be a string, not int", TypeError),
    Bad("add-expr-int", lambda c: c.ds.add_columns({"x": 5}), TypeError,
        "transforms['x'] must be a SQL expression (str), got 5 (int)", TypeError),
    Bad("add-empty-name", lambda c: c.ds.add_columns({"": "1"}), ValueError,
        "transforms keys must not be empty", OSError),
    Bad("add-existing", lambda c: c.ds.add_columns({"id": "1"}), Lse, "already exists", OSError),
    Bad("add-unknown-in-expr", lambda c: c.ds.add_columns({"x": "nope + 1"}), IE, "nope", OSError),
    Bad("add-int", lambda c: c.ds.add_columns(5), TypeError, "not int", TypeError),
    Bad("add-none", lambda c: c.ds.add_columns(None), TypeError, "not NoneType", TypeError),
    Bad("add-read-columns-int", lambda c: ls.dataset(c.uri).add_columns({"x": "1"}, read_columns=5),
        TypeError, "read_columns must be a list of column names"),
    Bad("set-encoding-path-int", lambda c: ls.dataset(c.uri).set_output_encoding(5, "utf8"),
        TypeError, "field_path must be a str, got 5 (int)"),
    Bad("set-encoding-int", lambda c: ls.dataset(c.uri).set_output_encoding("s", 5), TypeError,
        "encoding must be a str, got 5 (int)"),
    Bad("set-encoding-empty", lambda c: ls.dataset(c.uri).set_output_encoding("s", ""),
        ls.InvalidOutputEncodingError, "''"),
    Bad("set-encoding-unknown", lambda c: ls.dataset(c.uri).set_output_encoding("s", "bogus"),
        ls.InvalidOutputEncodingError, "bogus"),
    Bad("set-encoding-no-field", lambda c: ls.dataset(c.uri).set_output_encoding("x", "utf8"),
        ls.InvalidOutputEncodingError, "no such field"),
    # ---- compaction ---------------------------------------------------------------------
    Bad("compact-target-negative",
        lambda c: c.ds.optimize.compact_files(target_rows_per_fragment=-1), ValueError,
        "target_rows_per_fragment must be at least 1, got -1", OverflowError),
    Bad("compact-target-str", lambda c: c.ds.optimize.compact_files(target_rows_per_fragment="10"),
        TypeError, "target_rows_per_fragment must be an integer, got '10' (str)", TypeError),
    Bad("compact-target-float", lambda c: c.ds.optimize.compact_files(target_rows_per_fragment=1.5),
        TypeError, "got 1.5 (float)", TypeError),
    Bad("compact-threads-zero", lambda c: ls.dataset(c.uri).optimize.compact_files(num_threads=0),
        ValueError, "num_threads must be at least 1, got 0"),  # pylance hangs
    Bad("compact-batch-size-negative", lambda c: c.ds.optimize.compact_files(batch_size=-1),
        ValueError, "batch_size must be at least 1, got -1", OverflowError),
    Bad("compact-group-negative", lambda c: c.ds.optimize.compact_files(max_rows_per_group=-1),
        ValueError, "max_rows_per_group", OverflowError),
    Bad("compact-materialize-str",
        lambda c: c.ds.optimize.compact_files(materialize_deletions="yes"), TypeError,
        "materialize_deletions must be a bool, got 'yes' (str)", TypeError),
    Bad("compact-threshold-str",
        lambda c: c.ds.optimize.compact_files(materialize_deletions_threshold="x"), TypeError,
        "materialize_deletions_threshold must be a number, got 'x' (str)", TypeError),
    Bad("compact-unknown-kwarg", lambda c: c.ds.optimize.compact_files(bogus=1), TypeError, "bogus",
        TypeError),
    Bad("compact-positional", lambda c: c.ds.optimize.compact_files(5), TypeError, "positional",
        TypeError),
    # ---- index verbs (the table has no index) ------------------------------------------
    Bad("drop-index-int", lambda c: c.ds.drop_index(3), TypeError, "argument 'name'", TypeError),
    Bad("index-stats-int", lambda c: c.ds.stats.index_stats(3), TypeError,
        "argument 'index_name'", TypeError),
    Bad("optimize-indices-unknown-kwarg", lambda c: c.ds.optimize.optimize_indices(bogus=1),
        TypeError, "bogus"),  # pylance 14 ignores it
    Bad("optimize-indices-names-str",
        lambda c: c.ds.optimize.optimize_indices(index_names="x"), ValueError, "index_names",
        ValueError),
    Bad("optimize-indices-retrain-str",
        lambda c: c.ds.optimize.optimize_indices(retrain="yes"), TypeError, "retrain", TypeError),
    Bad("optimize-indices-merge-str",
        lambda c: c.ds.optimize.optimize_indices(num_indices_to_merge="x"), TypeError,
        "num_indices_to_merge", TypeError),
    Bad("uncommitted-index-no-fragments",
        lambda c: c.ds.create_index_uncommitted("s", "IVF_FLAT"), ValueError,
        "requires fragment_ids", ValueError),
    Bad("create-scalar-index-missing-column",
        lambda c: c.ds.create_scalar_index("nope", "BTREE"), ls.ColumnNotFoundError, "'nope'",
        KeyError),
    Bad("create-scalar-index-label-list-on-string",
        lambda c: c.ds.create_scalar_index("s", "LABEL_LIST"), TypeError,
        "LABEL_LIST index column s must be a list or large list", TypeError),
    Bad("create-scalar-index-unknown-option",
        lambda c: c.ds.create_scalar_index("id", "BTREE", bogus=1), TypeError,
        "unknown option 'bogus'"),  # pylance 14 ignores it
    Bad("create-scalar-index-fragment-ids",
        lambda c: c.ds.create_scalar_index("id", "BTREE", fragment_ids=[0]), ValueError,
        "BTREE distributed indexing uses create_index_uncommitted", ValueError),
    Bad("create-scalar-index-bad-uuid",
        lambda c: c.ds.create_scalar_index("id", "BITMAP", index_uuid="x"), ValueError,
        "Invalid UUID string for index_uuid", ValueError),
    Bad("create-scalar-index-ngram",
        lambda c: c.ds.create_scalar_index("s", "NGRAM"), ls.NotSupportedYetError,
        "create_scalar_index: index_type NGRAM"),
    Bad("create-index-op-str", lambda c: ls.LanceOperation.CreateIndex("x", []), TypeError,
        "new_indices must be a list of Index"),
    Bad("commit-create-index-not-index",
        lambda c: ls.Dataset.commit(c.uri, ls.LanceOperation.CreateIndex(["x"], []), 2),
        TypeError, "an index must be an ls.Index or a lance Index"),
    # ---- the CLI: one line on stderr, exit 1 (argparse usage errors: exit 2) -----------------
    Bad("cli-inspect-missing", _cli("inspect", "{new}"), CliFailed,
        "exit 1: lance-semantic: error: no such directory"),
    Bad("cli-inspect-version-str", _cli("inspect", "{uri}", "--version", "v1"), CliFailed,
        "exit 2"),
    Bad("cli-inspect-version-negative", _cli("inspect", "{uri}", "--version", "-1"), CliFailed,
        "exit 1: lance-semantic: error: version must be at least 1, got -1"),
    Bad("cli-inspect-version-missing", _cli("inspect", "{uri}", "--version", "9"), CliFailed,
        "version 9 does not exist"),
    Bad("cli-upgrade-missing", _cli("upgrade", "{new}"), CliFailed, "no such directory"),
    Bad("cli-set-encoding-bad", _cli("set-output-encoding", "{uri}", "s", "bogus"), CliFailed,
        "exit 1: lance-semantic: error: field 's': invalid output encoding 'bogus'"),
    Bad("cli-set-encoding-no-field", _cli("set-output-encoding", "{uri}", "x", "utf8"), CliFailed,
        "no such field"),
    Bad("cli-unknown-command", _cli("bogus", "{uri}"), CliFailed, "exit 2"),
    Bad("cli-unknown-option", _cli("inspect", "{uri}", "--bogus"), CliFailed, "exit 2"),
]
# fmt: on


def _snapshot(uri: str) -> dict[str, str]:
    """Every file under the table, with a digest of its bytes."""
    out = {}
    for root, _, files in os.walk(uri):
        for name in files:
            path = os.path.join(root, name)
            out[os.path.relpath(path, uri)] = hashlib.sha256(Path(path).read_bytes()).hexdigest()
    return out


@pytest.fixture(scope="module")
def templates(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Two-version tables (create + append), one flagged table of ours and one of pylance's."""
    root = tmp_path_factory.mktemp("bad_arguments")
    ours, theirs = str(root / "ours"), str(root / "pylance")
    ls.write_dataset(DATA, ours, data_storage_version="2.3")
    ls.write_dataset(DATA, ours, mode="append")
    lance.write_dataset(DATA, theirs)
    lance.write_dataset(DATA, theirs, mode="append")
    return {"ours": ours, "pylance": theirs}


def _run(case: Bad, m: Any, template: str, tmp_path: Path) -> BaseException:
    uri = str(tmp_path / "t")
    shutil.copytree(template, uri)
    new = str(tmp_path / "new")
    before = _snapshot(uri)
    ds = m.dataset(uri)
    cwd = os.getcwd()
    os.chdir(tmp_path)  # an empty uri must not touch the directory the tests run in
    try:
        with pytest.raises(BaseException) as info:  # noqa: PT011 - checked below
            result = case.call(Ctx(m, ds, uri, new))
            if hasattr(result, "__next__"):  # a lazy read: the error comes with the first batch
                next(iter(result))  # type: ignore[call-overload]
    finally:
        os.chdir(cwd)
    assert _snapshot(uri) == before, "a bad call changed the table's files"
    assert m.dataset(uri).version == 2, "a bad call moved the table's version"
    assert not os.path.exists(new), "a bad call created something at a new path"
    assert sorted(os.listdir(tmp_path)) == ["t"], "a bad call wrote outside the table"
    return info.value


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_argument(case: Bad, templates: dict[str, str], tmp_path: Path) -> None:
    error = _run(case, ls, templates["ours"], tmp_path)
    assert isinstance(error, case.error), f"{type(error).__name__}: {error}"
    assert isinstance(error, ls.LanceSemanticError | TypeError | ValueError | CliFailed)
    assert case.fragment in str(error)


PYLANCE = [c for c in CASES if c.pylance is not None]


@pytest.mark.interop
@pytest.mark.parametrize("case", PYLANCE, ids=[c.id for c in PYLANCE])
def test_pylance_refuses_it_too(case: Bad, templates: dict[str, str], tmp_path: Path) -> None:
    error = _run(case, lance, templates["pylance"], tmp_path)
    assert isinstance(error, case.pylance), f"{type(error).__name__}: {error}"


def test_the_table_covers_the_issue_cases() -> None:
    ids = {c.id for c in CASES}
    assert {
        "dataset-int-uri",
        "version-str",
        "limit-negative",
        "offset-negative",
        "batch-size-negative",
        "take-float",
        "filter-not-boolean",
        "update-wrong-type-literal",
        "update-str",
    } <= ids
    assert len(ids) == len(CASES), "case ids must be unique"


def test_numpy_and_bool_integers_are_accepted_as_in_pylance(tmp_path: Path) -> None:
    """numpy integers work everywhere an int does (pylance refuses them for ``version``);
    bools count as integers where pylance takes them so (``limit=True`` is ``limit=1``)."""
    uri = str(tmp_path / "t")
    ds = ls.write_dataset(DATA, uri)
    ls.write_dataset(DATA, uri, mode="append")
    assert ls.dataset(uri, version=np.int64(1)).count_rows() == 4
    assert ds.checkout_version(np.int32(1)).version == 1
    assert ds.take([np.int64(1), 2]).column("id").to_pylist() == [2, 3]
    assert ds.take(np.array([3], dtype=np.uint8)).column("id").to_pylist() == [4]
    assert ds.take(pa.array([0], pa.int8())).column("id").to_pylist() == [1]
    assert ds.take([]).num_rows == 0
    assert ds.to_table(limit=np.int64(2), offset=np.int16(1)).column("id").to_pylist() == [2, 3]
    assert ds.to_table(limit=True).num_rows == lance.dataset(uri).to_table(limit=True).num_rows
    assert ds.take([True]).to_pydict() == lance.dataset(uri).take([True]).to_pydict()
    out = ls.write_dataset(DATA, str(tmp_path / "n"), max_rows_per_file=np.int64(2))
    assert len(out.get_fragments()) == 2
    compacted = ls.dataset(uri).optimize.compact_files(target_rows_per_fragment=np.int64(100))
    assert compacted.fragments_removed == 2


def test_a_path_object_is_a_uri(tmp_path: Path) -> None:
    ds = ls.write_dataset(DATA, tmp_path / "t")
    assert ls.dataset(tmp_path / "t").count_rows() == ds.count_rows() == 4
    assert ls.upgrade(tmp_path / "t").semantic_types


def test_an_update_value_that_fits_after_all_is_written(tmp_path: Path) -> None:
    """The up-front check refuses what cannot fit; a string column holding numbers converts,
    value by value, as a cast does."""
    uri = str(tmp_path / "t")
    ds = ls.write_dataset(pa.table({"id": [1, 2], "n": ["10", "20"]}), uri)
    assert ds.update({"id": "n"}).num_rows_updated == 2
    assert sorted(ds.to_table().column("id").to_pylist()) == [10, 20]


def test_stable_row_ids_are_named_not_bits(tmp_path: Path) -> None:
    uri = str(tmp_path / "t")
    lance.write_dataset(DATA, uri, enable_stable_row_ids=True)
    ds = ls.dataset(uri)  # readable: row ids are ignored on read
    before = _snapshot(uri)
    with pytest.raises(ls.UnsupportedFeatureError) as info:
        ds.insert(ROW)
    assert info.value.features == ("stable_row_ids",)
    assert info.value.bits == (1,)
    assert "stable_row_ids (bit 1)" in str(info.value)
    assert "writer features" in str(info.value)
    assert _snapshot(uri) == before
