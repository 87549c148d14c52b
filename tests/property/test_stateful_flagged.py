"""Stateful test of a flagged table against an in-memory model.

The table (``semantic_types=True`` on data storage 2.2, a 2.3 table, or a legacy table
upgraded with ``ls.upgrade``) holds one column of each kind the contract names: string,
binary, list, decimal, json, a struct with a string child, an unknown extension type and
optionally a blob v2 column. Random operations: appends in every accepted layout of every
column (by ``insert``, ``write_dataset`` and two-phase ``write_fragments`` + ``commit``;
columns or struct children left out), ``set_output_encoding``, delete, update,
merge_insert, add / drop / alter columns, compaction, restore and reads of old versions,
reads with per-request ``output_encodings`` through every read path. After every step:
the values (the model), the Arrow type each read returns (override > field entry >
default), take of random rows, a filtered scan, the blob bytes, ``ls.check`` and the
flag (pylance refuses to open the table).

Bounded like ``test_stateful_twins.py`` (same environment variables).
"""

from __future__ import annotations

import os
import random
import shutil
import tempfile
from typing import Any

import lance
import pyarrow as pa
import pytest
from hypothesis import event, note
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule
from tests.property.model_support import (
    EXT_MD,
    INPUT_LAYOUTS,
    VIEW_ENCODINGS,
    VIEW_LAYOUTS,
    Column,
    Model,
    created_entry,
    encodings_of,
    input_table,
    read_value,
)
from tests.property.test_stateful_twins import SETTINGS
from tests.property.twin_support import attempt, log_operation

import lance_semantic as ls
from lance_semantic.errors import InvalidOutputEncodingError, LanceSemanticError

pytestmark = pytest.mark.interop

#: the paths output encodings apply to, by kind
_ENCODED = ("string", "binary", "list", "decimal", "json")


def _seed_columns(with_blob: bool, blob_last: bool) -> list[Column]:
    cols = [
        Column("id", "key", nullable=False),
        Column("s", "string"),
        Column("b", "binary"),
        Column("l", "list"),
        Column("d", "decimal"),
        Column("j", "json"),
        Column("st", "struct", children=["x", "y"]),
        Column("e", "ext"),
    ]
    if with_blob:
        cols.insert(len(cols) if blob_last else 3, Column("blob", "blob"))
    return cols


class FlaggedModel(RuleBasedStateMachine):
    """A flagged table and the model of what it holds."""

    def __init__(self) -> None:
        super().__init__()
        self.dir = tempfile.mkdtemp(prefix="ls-flagged-")
        self.uri = os.path.join(self.dir, "t.lance")
        self.tag = 0
        self.next_id = 0
        self.names = 0
        self.step = 0
        self.snapshots: dict[int, Model] = {}

    def teardown(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)

    # ---- helpers ---------------------------------------------------------------------------

    def _fresh(self, n: int) -> list[int]:
        ids = list(range(self.next_id, self.next_id + n))
        self.next_id += n
        return ids

    def _name(self, stem: str) -> str:
        self.names += 1
        return f"{stem}{self.names}"

    def _layouts(self, data: st.DataObject, columns: list[Column]) -> dict[str, str]:
        out = {}
        for c in columns:
            kind = "string" if c.kind == "struct" else c.kind
            if kind != "key":
                out[c.name] = data.draw(st.sampled_from(INPUT_LAYOUTS[kind]), label=c.name)
        return out

    def _commit(self, what: str, call: Any, *, model: Model | None, by_handle: bool = True) -> Any:
        """Run a committing operation; ``model`` is what the table holds after it (None: the
        operation must be refused with a library error and change nothing). An operation
        of the handle moves it to the version it committed."""
        note(what)
        before = ls.dataset(self.uri).version
        out = attempt(call)
        log_operation(("ok " if out.ok else "ref") + " " + what)
        if model is None:
            assert not out.ok, f"{what}: expected a refusal, got {out}"
            assert out.error is not None
            assert isinstance(out.error, LanceSemanticError), (what, out)
            assert ls.dataset(self.uri).version == before, what
            event(f"{what.split('(')[0]}: refused")
            return out
        assert out.ok, f"{what}: {out}"
        event(f"{what.split('(')[0]}: done")
        latest = ls.dataset(self.uri).version
        if by_handle:
            assert self.ds.version == latest, (what, self.ds.version, latest)
        else:
            self.ds = ls.dataset(self.uri)
        note(f"  -> version {latest}")
        for v in range(before + 1, latest + 1):
            self.snapshots[v] = model.copy()
        self.model = model
        return out.result

    # ---- setup -----------------------------------------------------------------------------

    @initialize(
        data=st.data(),
        variant=st.sampled_from(["2.2", "2.3", "upgrade"]),
        n=st.integers(0, 8),
        with_blob=st.booleans(),
        blob_last=st.booleans(),
        max_rows=st.sampled_from([3, 1024]),
        appends=st.integers(0, 3),
    )
    def create(
        self,
        data: st.DataObject,
        variant: str,
        n: int,
        with_blob: bool,
        blob_last: bool,
        max_rows: int,
        appends: int,
    ) -> None:
        """Create the table, then append ``appends`` times in other layouts (most tables
        then mix layouts in each column)."""
        self.with_blob = with_blob
        columns = _seed_columns(with_blob, blob_last)
        layouts = self._layouts(data, columns)
        layouts["e"] = "ext"  # the columns are created with their extension
        if with_blob:
            layouts["blob"] = "blob"
        if variant == "upgrade":  # legacy tables take no views
            for name, layout in layouts.items():
                if layout in VIEW_LAYOUTS:
                    layouts[name] = layout.replace("utf8_view", "utf8").replace(
                        "binary_view", "binary"
                    )
        self.tag += 1
        table, rows = input_table(columns, self._fresh(n), self.tag, layouts)
        for c in columns:
            kind = "string" if c.kind == "struct" else c.kind
            if c.kind == "struct":
                c.child_entry = created_entry("string", layouts[c.name])
            elif kind != "key":
                legacy_json = variant == "upgrade" and kind == "json"
                c.entry = None if legacy_json else created_entry(kind, layouts[c.name])
        model = Model(columns, {})
        model.insert(rows)
        note(f"create {variant} layouts={layouts} rows={n} blob={with_blob}")
        if variant == "upgrade":
            ls.write_dataset(table, self.uri, max_rows_per_file=max_rows)
            self.snapshots[1] = model.copy()
            self.ds = ls.upgrade(self.uri)
        else:
            kwargs: dict[str, Any] = (
                {"data_storage_version": "2.3"} if variant == "2.3" else {"semantic_types": True}
            )
            self.ds = ls.write_dataset(table, self.uri, max_rows_per_file=max_rows, **kwargs)
        self.snapshots[self.ds.version] = model.copy()
        self.model = model
        for _ in range(appends):
            self.append(data, 3, "insert", None, 1024)

    # ---- writes ----------------------------------------------------------------------------

    @rule(
        data=st.data(),
        n=st.integers(1, 6),
        via=st.sampled_from(["insert", "write_dataset", "fragments", "mixed_order"]),
        leave_out=st.sampled_from([None, "column", "struct_child", "reordered"]),
        max_rows=st.sampled_from([2, 1024]),
    )
    def append(
        self, data: st.DataObject, n: int, via: str, leave_out: str | None, max_rows: int
    ) -> None:
        model = self.model.copy()
        columns = model.columns
        optional = model.names(lambda c: c.nullable)
        if leave_out == "column" and optional:
            gone = data.draw(st.sampled_from(optional))
            columns = [c for c in columns if c.name != gone]
            model.column(gone).sparse = True
        children = None
        if leave_out == "struct_child" and "st" in model.names():
            st_col = model.column("st")
            children = [c for c in st_col.children if c != "y"] or None
            if children is not None and "y" in st_col.children:
                st_col.sparse = True
        if leave_out == "reordered":  # columns and struct children in another order
            columns = columns[::-1]
            children = ["y", "x"]
        self.tag += 1
        layouts = self._layouts(data, columns)
        table, rows = input_table(
            columns, self._fresh(n), self.tag, layouts, struct_children=children
        )
        model.insert(rows)
        what = f"append via {via} layouts={layouts} without={leave_out} rows={n}"
        if via == "insert":
            call: Any = lambda: self.ds.insert(table, max_rows_per_file=max_rows)  # noqa: E731
        elif via == "write_dataset":

            def call() -> Any:
                return ls.write_dataset(table, self.uri, mode="append", max_rows_per_file=max_rows)
        elif via == "fragments":

            def call() -> Any:
                frags = ls.fragment.write_fragments(table, self.uri, max_rows_per_file=max_rows)
                op = ls.LanceOperation.Append(frags)
                return ls.Dataset.commit(self.uri, op, read_version=self.ds.version)
        else:  # item 6: one write whose batches come with their columns in other orders
            names = table.column_names[::-1]
            first = table.slice(0, 1).to_batches()
            rest = table.slice(1).select(names).to_batches()
            call = lambda: self.ds.insert([*first, *rest])  # noqa: E731
        self._commit(what, call, model=model, by_handle=via in ("insert", "mixed_order"))

    def _predicate(self, data: st.DataObject) -> tuple[str, Any]:
        """A SQL predicate and its meaning on a model row (SQL NULL: not true)."""
        top = self.next_id + 1
        kind = data.draw(st.sampled_from(["mod", "below", "range", "in", "null", "ext"]))
        if kind == "mod":
            k = data.draw(st.integers(2, 4))
            r = data.draw(st.integers(0, k - 1))
            return f"id % {k} = {r}", lambda row: row["id"] % k == r
        if kind == "below":
            x = data.draw(st.integers(0, top))
            return f"id < {x}", lambda row: row["id"] < x
        if kind == "range":
            lo = data.draw(st.integers(0, top))
            hi = lo + data.draw(st.integers(1, 5))
            return f"id >= {lo} AND id < {hi}", lambda row: lo <= row["id"] < hi
        if kind == "in":
            ids = data.draw(st.lists(st.integers(0, top), min_size=1, max_size=4))
            return f"id IN ({', '.join(map(str, ids))})", lambda row: row["id"] in ids
        nullable = self.model.names(lambda c: c.kind in ("string", "json", "decimal", "binary"))
        if kind == "null" and nullable:
            c = data.draw(st.sampled_from(nullable))
            return f"{c} IS NULL", lambda row: row[c] is None
        exts = self.model.names(lambda c: c.kind == "ext")
        if exts:
            c = exts[0]
            return f"{c} > 10", lambda row: row[c] is not None and row[c] > 10
        return "id < 0", lambda row: False

    @rule(data=st.data())
    def delete(self, data: st.DataObject) -> None:
        sql, pred = self._predicate(data)
        model = self.model.copy()
        gone = [i for i, row in model.rows.items() if pred(row)]
        for i in gone:
            del model.rows[i]
        result = self._commit(f"delete({sql!r})", lambda: self.ds.delete(sql), model=model)
        assert result.num_deleted_rows == len(gone)

    def _update(self, data: st.DataObject, col: Column) -> tuple[str, Any] | None:
        """An update expression for ``col`` and its meaning on a model row."""
        c = col.name
        if col.kind == "string":
            choices = ["lit", "append", "null", "cast"]
            if not col.nullable:
                choices.remove("null")
            how = data.draw(st.sampled_from(choices))
            if how == "lit":
                return "'lit'", lambda row: "lit"
            if how == "append":
                return f"{c} || 'x'", lambda row: None if row[c] is None else row[c] + "x"
            if how == "cast":
                return "CAST(id AS STRING)", lambda row: str(row["id"])
            return "NULL", lambda row: None
        if col.kind == "json":
            return data.draw(
                st.sampled_from(
                    [("'{\"u\": [1, 2]}'", lambda row: {"u": [1, 2]}), ("NULL", lambda row: None)]
                )
            )
        if col.kind == "decimal":
            return f"{c} + 1", lambda row: None if row[c] is None else row[c] + 1
        if col.kind in ("ext", "int64"):
            return f"{c} + 1", lambda row: None if row[c] is None else row[c] + 1
        if col.kind == "bool":
            return f"NOT {c}", lambda row: None if row[c] is None else not row[c]
        return None

    @rule(data=st.data(), with_where=st.booleans())
    def update(self, data: st.DataObject, with_where: bool) -> None:
        names = [c.name for c in self.model.columns if self._update(data, c) is not None]
        if not names:
            return
        col = self.model.column(data.draw(st.sampled_from(names)))
        expr = self._update(data, col)
        assert expr is not None
        sql, fn = expr
        where, pred = self._predicate(data) if with_where else (None, lambda row: True)
        model = self.model.copy()
        hit = [row for row in model.rows.values() if pred(row)]
        for row in hit:
            row[col.name] = fn(row)
        result = self._commit(
            f"update({{{col.name!r}: {sql!r}}}, where={where!r})",
            lambda: self.ds.update({col.name: sql}, where=where),
            model=model,
        )
        assert result.num_rows_updated == len(hit)

    @rule(
        data=st.data(),
        matched=st.sampled_from([None, "update_all", "update_if", "delete"]),
        not_matched=st.booleans(),
        by_source=st.booleans(),
        subset=st.booleans(),
    )
    def merge_insert(
        self,
        data: st.DataObject,
        matched: str | None,
        not_matched: bool,
        by_source: bool,
        subset: bool,
    ) -> None:
        if matched is None and not not_matched and not by_source:
            not_matched = True
        ids = sorted(self.model.rows)
        old = data.draw(st.lists(st.sampled_from(ids), max_size=4, unique=True)) if ids else []
        keys = old + self._fresh(data.draw(st.integers(0, 3)))
        columns = self.model.columns
        if subset:  # item 4 on flagged tables too: a source without a non-nullable column
            columns = [c for c in columns if c.kind == "key" or data.draw(st.booleans())]
        self.tag += 1
        layouts = self._layouts(data, columns)
        source, rows = input_table(columns, keys, self.tag, layouts)
        model = self.model.copy()
        counts = {"inserted": 0, "updated": 0, "deleted": 0}
        given = [c.name for c in columns]
        for i in keys:
            if i in model.rows:
                target = model.rows[i]
                if matched == "update_all" or (matched == "update_if" and i % 2 == 0):
                    target.update({k: rows[i][k] for k in given})
                    counts["updated"] += 1
                elif matched == "delete":
                    del model.rows[i]
                    counts["deleted"] += 1
            elif not_matched:
                model.insert({i: rows[i]})
                counts["inserted"] += 1
        if by_source:
            for i in [i for i in model.rows if i not in keys]:
                del model.rows[i]
                counts["deleted"] += 1

        def call() -> Any:
            b = self.ds.merge_insert("id")
            if matched == "update_all":
                b = b.when_matched_update_all()
            elif matched == "update_if":
                b = b.when_matched_update_all("target.id % 2 = 0")
            elif matched == "delete":
                b = b.when_matched_delete()
            if not_matched:
                b = b.when_not_matched_insert_all()
            if by_source:
                b = b.when_not_matched_by_source_delete()
            return b.execute(source)

        what = (
            f"merge_insert(keys={keys}, layouts={layouts}, matched={matched}, "
            f"not_matched={not_matched}, by_source={by_source})"
        )
        partial = any(not c.nullable and c not in columns for c in self.model.columns)
        if not_matched and keys and partial:  # pylance: no insert without a non-nullable column
            self._commit(what, call, model=None)
            return
        result = self._commit(what, call, model=model)
        got = (result.num_inserted_rows, result.num_updated_rows, result.num_deleted_rows)
        assert got == (counts["inserted"], counts["updated"], counts["deleted"]), what

    # ---- schema ----------------------------------------------------------------------------

    @rule(data=st.data(), how=st.sampled_from(["int", "lit", "cast", "concat", "field"]))
    def add_columns(self, data: st.DataObject, how: str) -> None:
        strings = self.model.names(lambda c: c.kind == "string")
        if how == "concat" and not strings:
            how = "lit"
        name = self._name("c")
        model = self.model.copy()
        if how == "field":
            kind = data.draw(st.sampled_from(["string", "binary", "list"]))
            layout = data.draw(st.sampled_from(INPUT_LAYOUTS[kind]))
            col = Column(name, kind, entry=created_entry(kind, layout), sparse=True)
            model.columns.append(col)
            for row in model.rows.values():
                row[name] = None
            empty, _ = input_table([col], [], 0, {name: layout})
            self._commit(
                f"add_columns({empty.schema.field(0)})",
                lambda: self.ds.add_columns(empty.schema.field(0)),
                model=model,
            )
            return
        nullable, entry = True, None
        if how == "int":  # as nullable as id is
            sql, kind, fn = "id * 2", "int64", (lambda row: row["id"] * 2)
            nullable = model.column("id").nullable
        elif how == "lit":
            sql, kind, fn = "'lit'", "string", (lambda row: "lit")
            nullable = False  # a literal is never null: the column is not nullable
        elif how == "cast":
            sql, kind, fn = "CAST(id AS STRING)", "string", (lambda row: str(row["id"]))
            nullable = model.column("id").nullable
        else:
            s = data.draw(st.sampled_from(strings))
            sql, kind = f"concat({s}, 'x')", "string"
            fn = lambda row: (row[s] or "") + "x"  # noqa: E731 - concat skips NULLs
            # README "The engine's layouts are not the user's": SQL sees a column in its
            # output encoding and concat of a large_string is a large_string (DataFusion
            # 55), which the new column records; of any other layout a string
            if model.column(s).entry == "large_utf8":
                entry = "large_utf8"
        model.columns.append(Column(name, kind, entry=entry, nullable=nullable))
        for row in model.rows.values():
            row[name] = fn(row)
        self._commit(
            f"add_columns({{{name!r}: {sql!r}}})",
            lambda: self.ds.add_columns({name: sql}),
            model=model,
        )

    @rule(data=st.data())
    def drop_columns(self, data: st.DataObject) -> None:
        names = self.model.names()
        if len(names) < 2:
            return
        paths = names + [f"st.{c}" for c in ("x", "y") if "st" in names]
        path = data.draw(st.sampled_from(paths))
        model = self.model.copy()
        top, _, child = path.partition(".")
        col = model.column(top)
        if child:
            if len(col.children) < 2 or child not in col.children:
                return
            if col.sparse and child == "x":
                # a fragment holding only x (an append left y out) loses its structs'
                # validity when x goes: its rows read as null structs, in pylance 14 too
                # (legacy twins agree); the model does not track which rows those are
                return
            col.children.remove(child)
            for row in model.rows.values():
                if row[top] is not None:
                    row[top].pop(child)
        else:
            model.columns.remove(col)
            for row in model.rows.values():
                del row[top]
        self._commit(f"drop_columns([{path!r}])", lambda: self.ds.drop_columns([path]), model=model)

    @rule(data=st.data(), kind=st.sampled_from(["rename", "nullable", "layout", "other_type"]))
    def alter_columns(self, data: st.DataObject, kind: str) -> None:
        model = self.model.copy()
        if kind == "nullable":
            model.column("id").nullable = True
            self._commit(
                "alter_columns(id nullable)",
                lambda: self.ds.alter_columns({"path": "id", "nullable": True}),
                model=model,
            )
            return
        names = self.model.names(lambda c: c.kind != "blob")
        if not names:
            return
        col = model.column(data.draw(st.sampled_from(names)))
        if kind == "rename":
            old, new = col.name, self._name(col.name + "_r")
            col.name = new
            for row in model.rows.values():
                row[new] = row.pop(old)
            self._commit(
                f"alter_columns({old} -> {new})",
                lambda: self.ds.alter_columns({"path": old, "name": new}),
                model=model,
            )
            return
        if kind == "other_type" or col.kind not in ("string", "binary", "list", "decimal"):
            other = pa.string() if col.kind in ("ext", "int64", "bool") else pa.int8()
            self._commit(
                f"alter_columns({col.name} to {other})",
                lambda: self.ds.alter_columns({"path": col.name, "data_type": other}),
                model=None,
            )
            return
        layout = data.draw(st.sampled_from(INPUT_LAYOUTS[col.kind]))
        col.entry = created_entry(col.kind, layout)
        target, _ = input_table([col], [], 0, {col.name: layout})
        t = target.schema.field(0).type
        self._commit(
            f"alter_columns({col.name} to {t})",
            lambda: self.ds.alter_columns({"path": col.name, "data_type": t}),
            model=model,
        )

    def _encodable(self) -> list[tuple[str, Column]]:
        out = []
        for c in self.model.columns:
            if c.kind in _ENCODED:
                out.append((c.name, c))
            if c.kind == "struct" and "y" in c.children:
                out.append((c.name + ".y", c))
        return out

    @rule(data=st.data(), valid=st.booleans())
    def set_output_encoding(self, data: st.DataObject, valid: bool) -> None:
        paths = self._encodable()
        if not paths:
            return
        path = data.draw(st.sampled_from([p for p, _ in paths]))
        col = dict(paths)[path]
        kind = "string" if "." in path else col.kind
        model = self.model.copy()
        if not valid:
            wrong = "large_list" if kind != "list" else "utf8"
            self._commit(
                f"set_output_encoding({path!r}, {wrong!r})",
                lambda: self.ds.set_output_encoding(path, wrong),
                model=None,
            )
            return
        options = encodings_of(kind)
        encoding = data.draw(st.sampled_from([None, *options]))
        target = model.column(col.name)
        if "." in path:
            target.child_entry = encoding
        else:
            target.entry = encoding
        self._commit(
            f"set_output_encoding({path!r}, {encoding!r})",
            lambda: self.ds.set_output_encoding(path, encoding),
            model=model,
        )

    # ---- maintenance and versions ----------------------------------------------------------

    @rule(rows=st.sampled_from([None, 4, 64]), materialize=st.booleans())
    def compact(self, rows: int | None, materialize: bool) -> None:
        kwargs: dict[str, Any] = {"materialize_deletions": materialize}
        if rows is not None:
            kwargs["target_rows_per_fragment"] = rows
        self._commit(
            f"compact_files(**{kwargs!r})",
            lambda: self.ds.optimize.compact_files(**kwargs),
            model=self.model.copy(),
        )

    @rule(data=st.data())
    def restore(self, data: st.DataObject) -> None:
        version = data.draw(st.sampled_from(sorted(self.snapshots)))
        note(f"restore: checkout_version({version}) of the handle at {self.ds.version}")
        handle = self.ds.checkout_version(version)
        self._check_reads(handle, self.snapshots[version], {})
        self.ds = handle
        self._commit(f"restore({version})", handle.restore, model=self.snapshots[version])

    @rule()
    def upgrade_again(self) -> None:
        """Upgrading a flagged table changes nothing."""
        before = self.ds.version
        self.ds = self.ds.upgrade_semantic_types()
        assert self.ds.version == before

    # ---- reads -----------------------------------------------------------------------------

    def _overrides(self, rng: random.Random, views: bool | None = None) -> dict[str, str]:
        out = {}
        for path, col in self._encodable():
            kind = "string" if "." in path else col.kind
            options = encodings_of(kind)
            if views is not None:
                pick = [e for e in options if (e in VIEW_ENCODINGS) == views] or options[:1]
            else:
                pick = options
            if pick and rng.random() < 0.8:
                out[path] = rng.choice(pick)
        return out

    def _check_table(self, table: pa.Table, model: Model, overrides: dict[str, str]) -> None:
        """``table`` (whole rows of some ids) holds the model's values of those ids in the
        Arrow types the model expects."""
        cols = [c for c in model.columns if c.name in table.column_names]
        ids = table.column("id").to_pylist()
        assert len(set(ids)) == len(ids), ids
        assert set(ids) <= set(model.rows), sorted(set(ids) - set(model.rows))
        for col in cols:
            f = table.schema.field(col.name)
            assert f.type == model.read_type(col, overrides), (col.name, f.type, overrides)
            if col.kind == "ext":
                assert {k: v for k, v in (f.metadata or {}).items() if k in EXT_MD} == EXT_MD
            if col.kind == "blob":
                continue
            enc = model.encoding(col.name, overrides)
            got = read_value(col.kind, enc, table.column(col.name))
            want = [model.rows[i][col.name] for i in ids]
            assert got == want, (col.name, overrides)

    def _check_reads(self, ds: ls.Dataset, model: Model, overrides: dict[str, str]) -> None:
        names = [c.name for c in model.columns]
        assert ds.schema.names == names, (ds.schema.names, names)
        table = ds.to_table(output_encodings=overrides)
        assert sorted(table.column("id").to_pylist()) == sorted(model.rows)
        self._check_table(table, model, overrides)

    @rule(
        seed=st.integers(0, 2**16),
        via=st.sampled_from(["filter", "batches", "scanner", "take", "fragment", "head"]),
        views=st.sampled_from([None, True, False]),
    )
    def read(self, seed: int, via: str, views: bool | None) -> None:
        rng = random.Random(seed)
        overrides = self._overrides(rng, views)
        note(f"read via {via} output_encodings={overrides}")
        ds, model = ls.dataset(self.uri), self.model
        n = ds.count_rows()
        if via == "filter":
            k = rng.randint(2, 4)
            table = ds.to_table(filter=f"id % {k} = 1", output_encodings=overrides)
            assert sorted(table["id"].to_pylist()) == [i for i in sorted(model.rows) if i % k == 1]
        elif via == "batches":
            batches = list(ds.to_batches(output_encodings=overrides, batch_size=rng.randint(1, 4)))
            table = pa.Table.from_batches(
                batches, schema=ds.to_table(limit=0, output_encodings=overrides).schema
            )
            assert table.num_rows == n
        elif via == "scanner":
            sc = ds.scanner(filter="id >= 2", output_encodings=overrides, with_row_id=True)
            table = sc.to_table().drop_columns(["_rowid"])
        elif via == "take":
            picks = rng.sample(range(n), min(n, 4))
            table = ds.take(picks, output_encodings=overrides)
            order = ds.to_table(columns=["id"])["id"].to_pylist()
            assert table["id"].to_pylist() == [order[p] for p in picks]
        elif via == "fragment":
            frags = ds.get_fragments()
            if not frags:
                return
            table = rng.choice(frags).to_table(output_encodings=overrides)
        else:
            table = ds.head(rng.randint(0, 5), output_encodings=overrides)
        self._check_table(table, model, overrides)

    @rule(data=st.data())
    def read_old_version(self, data: st.DataObject) -> None:
        version = data.draw(st.sampled_from(sorted(self.snapshots)))
        note(f"read version {version}")
        self._check_reads(ls.dataset(self.uri, version=version), self.snapshots[version], {})

    @rule(data=st.data())
    def read_with_invalid_encoding(self, data: st.DataObject) -> None:
        paths = self._encodable()
        if not paths:
            return
        path = data.draw(st.sampled_from([p for p, _ in paths]))
        col = dict(paths)[path]
        wrong = "large_list" if col.kind != "list" or "." in path else "utf8"
        out = attempt(lambda: self.ds.to_table(output_encodings={path: wrong}))
        assert isinstance(out.error, InvalidOutputEncodingError), out

    # ---- after every step ------------------------------------------------------------------

    @invariant()
    def table_is_the_model(self) -> None:
        self.step += 1
        fresh = ls.dataset(self.uri)
        assert fresh.version == self.ds.version, (fresh.version, self.ds.version)
        assert fresh.semantic_types
        rng = random.Random(self.step)
        overrides = self._overrides(rng, views=(None, True, False)[self.step % 3])
        self._check_reads(fresh, self.model, {})
        self._check_reads(fresh, self.model, overrides)
        n = fresh.count_rows()
        assert n == len(self.model.rows)
        if n:
            picks = rng.sample(range(n), min(n, 3))
            self._check_table(fresh.take(picks, output_encodings=overrides), self.model, overrides)
        filtered = fresh.to_table(filter="id % 3 = 1", output_encodings=overrides)
        self._check_table(filtered, self.model, overrides)
        assert filtered.num_rows == sum(1 for i in self.model.rows if i % 3 == 1)
        if "blob" in self.model.names() and n:
            order = fresh.to_table(columns=["id"])["id"].to_pylist()
            picks = rng.sample(range(n), min(n, 2))
            for p, f in zip(picks, fresh.take_blobs("blob", indices=picks), strict=True):
                want = self.model.rows[order[p]]["blob"]
                if f is None:
                    assert want is None, order[p]
                    continue
                with f:
                    assert f.read() == want, order[p]
        report = ls.check(self.uri)
        assert report.ok, [(p.code, p.message) for p in report.problems]
        refused = attempt(lambda: lance.dataset(self.uri))
        assert not refused.ok


TestFlaggedModel = FlaggedModel.TestCase
TestFlaggedModel.settings = SETTINGS
