"""Extension semantic types (spec "Extension Semantic Types": value preservation, metadata
preservation, reserved prefix; validation bullet five; open decision 2 as the spec
recommends it: extensions layered on a type that already uses the Arrow slot live under
``lance-schema:extension-name`` / ``-metadata`` and reads map them to the Arrow keys when
the output field has no Arrow extension of its own).

The preservation matrix runs every rewriting operation over one flagged table holding an
Arrow-slot extension on a fixed-size list (``box``), on a string (``label``) and on a struct
member (``s.c``), and layered extensions on an int (``n``) and on json (``g``), all with
metadata that is not text (``b"\\x00\\x01v1"``), for a reader that registered no extension
types and for one that registered ``pa.ExtensionType`` classes for them.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import lance.arrow
import lance.file
import pyarrow as pa
import pytest

import lance_semantic as ls
from lance_semantic.errors import ReservedExtensionNameError, SchemaMismatchError

META = b"\x00\x01v1"
NAME, EXT_META = b"ARROW:extension:name", b"ARROW:extension:metadata"
LNAME, LMETA = b"lance-schema:extension-name", b"lance-schema:extension-metadata"
EXT_KEYS = (NAME, EXT_META, LNAME, LMETA)
FSL = pa.list_(pa.float32(), 4)


def _arrow_md(name: str) -> dict[bytes, bytes]:
    return {NAME: name.encode(), EXT_META: META}


def _layered_md(name: str) -> dict[bytes, bytes]:
    return {LNAME: name.encode(), LMETA: META}


BOX, LABEL, C = _arrow_md("example.bbox"), _arrow_md("example.label"), _arrow_md("example.c")
COUNT, GEO = _layered_md("example.count"), _layered_md("example.geojson")
#: what the table schema records per field path (extension keys only)
TABLE_EXT = {
    "box": BOX,
    "label": LABEL,
    "s.c": C,
    "n": COUNT,
    "g": {**GEO, NAME: b"lance.json", EXT_META: b""},
}


# ---- registered extension types ------------------------------------------------------------


def _ext_class(name: str) -> type[pa.ExtensionType]:
    def init(self: pa.ExtensionType, storage: pa.DataType) -> None:
        pa.ExtensionType.__init__(self, storage, name)

    def serialize(self: pa.ExtensionType) -> bytes:
        return META

    def deserialize(cls: Any, storage: pa.DataType, serialized: bytes) -> pa.ExtensionType:
        assert serialized == META
        return cls(storage)

    return type(
        name.replace(".", "_"),
        (pa.ExtensionType,),
        {
            "__init__": init,
            "__arrow_ext_serialize__": serialize,
            "__arrow_ext_deserialize__": classmethod(deserialize),
        },
    )


REGISTERED = {
    "example.bbox": _ext_class("example.bbox"),
    "example.label": _ext_class("example.label"),
    "example.c": _ext_class("example.c"),
    "example.count": _ext_class("example.count"),
}
#: output field path -> extension name the reader may register
OUTPUT_EXT = {
    "box": "example.bbox",
    "label": "example.label",
    "s.c": "example.c",
    "n": "example.count",
}


@pytest.fixture(params=[False, True], ids=["unregistered", "registered"])
def registered(request: pytest.FixtureRequest) -> Iterator[bool]:
    if not request.param:
        yield False
        return
    for cls in REGISTERED.values():
        pa.register_extension_type(cls(pa.null()))
    try:
        yield True
    finally:
        for name in REGISTERED:
            pa.unregister_extension_type(name)


# ---- the table -------------------------------------------------------------------------------


def _schema(form: str) -> pa.Schema:
    """``form``: "extension" (the keys as field metadata, or registered types when they are
    registered), "plain" (storage types, no extension keys at all)."""
    ext = form == "extension"
    c = pa.field("c", pa.int32(), metadata=C if ext else None)
    return pa.schema(
        [
            pa.field("k", pa.int64()),
            pa.field("box", FSL, metadata=BOX if ext else None),
            pa.field("label", pa.string(), metadata=LABEL if ext else None),
            pa.field("s", pa.struct([c])),
            pa.field("n", pa.int32(), metadata=COUNT if ext else None),
            pa.field("g", pa.json_(), metadata=GEO if ext else None),
            pa.field("o", pa.int8()),
        ]
    )


def _row(k: int, n_delta: int = 0) -> dict[str, Any]:
    return {
        "k": k,
        "box": [float(k), 1.0, 2.0, 3.5],
        "label": f"l{k}",
        "s": {"c": k},
        "n": k + n_delta,
        "g": json.dumps({"k": k}, separators=(",", ":")),
        "o": k % 100,
    }


def _rows(ks: range, form: str = "extension") -> pa.Table:
    """Rows ``ks``; with registered types the "extension" form uses them (a pyarrow
    import of the schema turns the keys into the registered types)."""
    schema = _schema(form)
    if form == "extension":
        schema = pa.ipc.read_schema(pa.py_buffer(schema.serialize()))
    table = pa.Table.from_pylist([_row(k) for k in ks], schema=_schema(form))
    return table.cast(schema)


def _make(tmp_path: Path, *, flagged: bool = True) -> ls.Dataset:
    ds = ls.write_dataset(
        _rows(range(4)), str(tmp_path / "t"), semantic_types=flagged, max_rows_per_file=2
    )
    assert ds.semantic_types == flagged
    return ds


def _ext_keys(md: Any) -> dict[bytes, bytes]:
    raw = {(k.encode() if isinstance(k, str) else k): v for k, v in (md or {}).items()}
    return {k: v for k, v in raw.items() if k in EXT_KEYS}


def _file_ext_keys(f: pa.Field) -> dict[bytes, bytes]:
    """Extension keys a data file records for ``f`` (a registered type consumed them)."""
    keys = _ext_keys(f.metadata)
    if isinstance(f.type, pa.ExtensionType):
        keys.update(
            {NAME: f.type.extension_name.encode(), EXT_META: f.type.__arrow_ext_serialize__()}
        )
    return keys


def _output_field(schema: pa.Schema, path: str) -> pa.Field:
    top, _, child = path.partition(".")
    f = schema.field(top)
    return f.type.field(child) if child else f


def _data_file_fields(ds: ls.Dataset) -> Iterator[tuple[str, pa.Field]]:
    """(path, field) of every top-level and struct-member field of every data file."""
    for frag in ds.manifest.fragments:
        for df in frag.files:
            path = os.path.join(ds.uri, "data", df.path)
            for f in lance.file.LanceFileReader(path).metadata().schema:
                yield f.name, f
                if pa.types.is_struct(f.type):
                    for c in f.type:
                        yield f"{f.name}.{c.name}", c


# ---- the checks --------------------------------------------------------------------------


def _assert_preserved(
    ds: ls.Dataset, registered: bool, rows: list[dict[str, Any]], names: dict[str, str]
) -> None:
    """Metadata and values of every extension field survived; ``names`` maps the original
    paths to the current ones (renames)."""
    table = ls.dataset(ds.uri)
    assert table.semantic_types
    paths = {p: names.get(p, p) for p in TABLE_EXT}
    # metadata preservation: the table schema, byte for byte
    for path, now in paths.items():
        assert _ext_keys(table.semantic_schema.field(now).metadata) == TABLE_EXT[path], path
    # reads: storage + Arrow keys for an unknown extension, the registered type otherwise;
    # layered keys map to the Arrow keys on a plain int, stay as they are on arrow.json
    schema = table.schema
    for path, ext_name in OUTPUT_EXT.items():
        f = _output_field(schema, paths[path])
        if registered:
            assert isinstance(f.type, REGISTERED[ext_name]), (path, f.type)
            assert _ext_keys(f.metadata) == {}
        else:
            assert not isinstance(f.type, pa.BaseExtensionType)
            assert _ext_keys(f.metadata) == {NAME: ext_name.encode(), EXT_META: META}, path
    g = schema.field(paths["g"])
    assert g.type == pa.json_(pa.string()) and _ext_keys(g.metadata) == GEO
    # value preservation: every read path returns the storage values in the output schema
    got = table.to_table()
    assert got.schema.equals(schema, check_metadata=True)
    assert table.take([0]).schema.equals(schema, check_metadata=True)
    assert table.get_fragments()[0].to_table().schema.equals(schema, check_metadata=True)
    expected = [
        {names.get(c, c): v for c, v in r.items() if names.get(c, c) in got.column_names}
        for r in rows
    ]
    assert sorted(got.to_pylist(), key=lambda r: r["k"]) == sorted(expected, key=lambda r: r["k"])
    # the data files record the table field's extension keys (and nothing else of the kind)
    current = set(paths.values()) | set(paths)
    seen = set()
    for path, f in _data_file_fields(table):
        if path in current:
            original = next(p for p, n in paths.items() if path in (p, n))
            assert _file_ext_keys(f) == TABLE_EXT[original], (path, f.metadata)
            seen.add(original)
    assert seen == set(TABLE_EXT)


# ---- the preservation matrix -----------------------------------------------------------------

Op = Callable[[ls.Dataset], tuple[list[dict[str, Any]], dict[str, str]]]
BASE = [_row(k) for k in range(4)]


def _append_plain(ds: ls.Dataset) -> tuple[list[dict[str, Any]], dict[str, str]]:
    ds.insert(_rows(range(4, 6), "plain"))
    return [_row(k) for k in range(6)], {}


def _append_extension(ds: ls.Dataset) -> tuple[list[dict[str, Any]], dict[str, str]]:
    ds.insert(_rows(range(4, 6)))
    return [_row(k) for k in range(6)], {}


def _append_read_output(ds: ls.Dataset) -> tuple[list[dict[str, Any]], dict[str, str]]:
    ds.insert(ds.to_table())  # layered keys come back under the Arrow keys
    return BASE + BASE, {}


def _update(ds: ls.Dataset) -> tuple[list[dict[str, Any]], dict[str, str]]:
    assert ds.update({"n": "n + 10"}, where="k >= 2").num_rows_updated == 2
    return [_row(k, 10 if k >= 2 else 0) for k in range(4)], {}


def _merge_insert(ds: ls.Dataset) -> tuple[list[dict[str, Any]], dict[str, str]]:
    source = _rows(range(2, 6))
    source = source.set_column(4, "n", pa.array([100 + k for k in range(2, 6)], pa.int32()))
    res = (
        ds.merge_insert("k").when_matched_update_all().when_not_matched_insert_all().execute(source)
    )
    assert (res.num_updated_rows, res.num_inserted_rows) == (2, 2)
    return [_row(k, 100 if k >= 2 else 0) for k in range(6)], {}


def _compaction(ds: ls.Dataset) -> tuple[list[dict[str, Any]], dict[str, str]]:
    ds.insert(_rows(range(4, 6), "plain"))
    ds.delete("k = 1")
    ds.optimize.compact_files(target_rows_per_fragment=1000)
    assert len(ds.manifest.fragments) == 1
    return [_row(k) for k in range(6) if k != 1], {}


def _add_columns(ds: ls.Dataset) -> tuple[list[dict[str, Any]], dict[str, str]]:
    ds.add_columns({"k2": "k * 2"})
    return [{**r, "k2": r["k"] * 2} for r in BASE], {}


def _drop_columns(ds: ls.Dataset) -> tuple[list[dict[str, Any]], dict[str, str]]:
    ds.drop_columns(["o"])
    return [{c: v for c, v in r.items() if c != "o"} for r in BASE], {}


def _rename(ds: ls.Dataset) -> tuple[list[dict[str, Any]], dict[str, str]]:
    ds.alter_columns({"path": "box", "name": "box2"}, {"path": "n", "name": "n2"})
    names = {"box": "box2", "n": "n2"}
    return BASE, names


def _alter_nullability(ds: ls.Dataset) -> tuple[list[dict[str, Any]], dict[str, str]]:
    ds.alter_columns({"path": "box", "nullable": False}, {"path": "n", "nullable": False})
    assert not ds.semantic_schema.field("box").nullable
    return BASE, {}


def _alter_type(ds: ls.Dataset) -> tuple[list[dict[str, Any]], dict[str, str]]:
    ds.alter_columns(
        {"path": "box", "data_type": pa.list_(pa.float64(), 4)},
        {"path": "n", "data_type": pa.int64()},
        {"path": "label", "data_type": pa.large_string()},  # one semantic type: metadata only
    )
    assert ds.semantic_schema.field("box").logical_type == "fixed_size_list:double:4"
    assert ds.semantic_schema.field("n").logical_type == "int64"
    return BASE, {}


def _upgrade(ds: ls.Dataset) -> tuple[list[dict[str, Any]], dict[str, str]]:
    assert not ds.semantic_types  # started legacy: the upgrade is one metadata-only commit
    assert ls.upgrade(ds.uri).semantic_types
    return BASE, {}


def _restore(ds: ls.Dataset) -> tuple[list[dict[str, Any]], dict[str, str]]:
    first = ds.version
    ds.drop_columns(["box", "g"])
    ds.alter_columns({"path": "n", "name": "n2"})
    ds.checkout_version(first).restore()
    return BASE, {}


OPS: dict[str, Op] = {
    "append_plain_storage": _append_plain,
    "append_same_extension": _append_extension,
    "append_read_output": _append_read_output,
    "update": _update,
    "merge_insert": _merge_insert,
    "compaction": _compaction,
    "add_columns": _add_columns,
    "drop_columns": _drop_columns,
    "rename": _rename,
    "alter_nullability": _alter_nullability,
    "alter_type": _alter_type,
    "upgrade": _upgrade,
    "restore": _restore,
}


@pytest.mark.parametrize("op", list(OPS))
def test_metadata_preservation_and_value_preservation_through_every_rewrite(
    tmp_path: Path, registered: bool, op: str
) -> None:
    """Spec "Metadata preservation" and "Value preservation" (and open decision 2), per
    operation: extension names and metadata (non-UTF-8-safe bytes included) survive byte
    for byte in the table schema and in every data file, reads return the storage values
    (as the registered type when there is one), and the layered keys map on output."""
    ds = _make(tmp_path, flagged=op != "upgrade")
    rows, names = OPS[op](ds)
    _assert_preserved(ds, registered, rows, names)


def test_validation_bullet_five_unrecognized_extension_round_trips_and_survives_compaction(
    tmp_path: Path,
) -> None:
    """Validation bullet five: a reader that does not know ``example.bbox`` (nothing is
    registered) reads its storage type with the extension keys, the values round-trip
    exactly, and compaction of fragments written as plain storage and as the extension
    keeps the metadata in the table schema and in the merged data file."""
    ds = _make(tmp_path)
    ds.insert(_rows(range(4, 6), "plain"))
    before = ds.to_table()
    assert before.schema.field("box").type == FSL
    assert before.column("box").to_pylist() == [_row(k)["box"] for k in range(6)]
    ds.optimize.compact_files(target_rows_per_fragment=100)
    assert len(ds.manifest.fragments) == 1
    assert ds.to_table().equals(before)
    assert ds.schema.equals(before.schema, check_metadata=True)
    assert _ext_keys(ds.semantic_schema.field("box").metadata) == BOX
    [(_, box)] = [(p, f) for p, f in _data_file_fields(ds) if p == "box"]
    assert _file_ext_keys(box) == BOX and box.type == FSL


def test_value_preservation_plain_storage_append_stores_the_table_extension_in_the_data_file(
    tmp_path: Path,
) -> None:
    """Writer boundary: plain storage values appended to extension columns are encoded
    under the table field's extension name and metadata (top level and struct member)."""
    ds = _make(tmp_path)
    before = {df.path for frag in ds.manifest.fragments for df in frag.files}
    ds.insert(_rows(range(4, 6), "plain"))
    [new] = [
        df.path for frag in ds.manifest.fragments for df in frag.files if df.path not in before
    ]
    schema = lance.file.LanceFileReader(os.path.join(ds.uri, "data", new)).metadata().schema
    assert _ext_keys(schema.field("box").metadata) == BOX
    assert _ext_keys(schema.field("s").type.field("c").metadata) == C
    assert _ext_keys(schema.field("n").metadata) == COUNT  # layered: no Arrow keys added
    assert ds.to_table().column("label").to_pylist() == [f"l{k}" for k in range(6)]


# ---- appends: the same extension, plain storage, never another one ---------------------------


def _with_metadata(table: pa.Table, path: str, md: dict[bytes, bytes] | None) -> pa.Table:
    schema = table.schema
    top, _, child = path.partition(".")
    f = schema.field(top)
    if child:
        inner = f.type
        i = inner.get_field_index(child)
        f = f.with_type(
            pa.struct([*list(inner)[:i], inner.field(i).with_metadata(md), *list(inner)[i + 1 :]])
        )
    else:
        f = f.with_metadata(md)
    return table.cast(schema.set(schema.get_field_index(top), f))


OTHER = {NAME: b"other.x"}


@pytest.mark.parametrize(
    ("path", "md"),
    [
        ("box", OTHER),
        ("box", {NAME: b"example.bbox", EXT_META: b"v2"}),  # same name, other parameters
        ("box", {NAME: b"example.bbox"}),  # metadata missing
        ("box", {**BOX, LNAME: b"example.more"}),  # a layered one the table does not have
        ("s.c", OTHER),
        ("o", {NAME: b"example.o"}),  # an extension on a plain column
        ("n", {LNAME: b"example.other"}),
        ("n", {NAME: b"example.other"}),
        ("g", {LNAME: b"example.other"}),
    ],
)
def test_append_of_another_extension_is_a_schema_mismatch_on_flagged_tables(
    tmp_path: Path, path: str, md: dict[bytes, bytes]
) -> None:
    ds = _make(tmp_path)
    files = set(os.listdir(os.path.join(ds.uri, "data")))
    bad = _with_metadata(_rows(range(4, 5), "plain"), path, md)
    with pytest.raises(SchemaMismatchError) as err:
        ds.insert(bad)
    assert err.value.field_path == path
    source = _with_metadata(_rows(range(0, 1), "plain"), path, md)
    with pytest.raises(SchemaMismatchError):
        ds.merge_insert("k").when_matched_update_all().execute(source)
    assert set(os.listdir(os.path.join(ds.uri, "data"))) == files
    assert ls.dataset(ds.uri).version == ds.version == 1


@pytest.mark.parametrize(
    ("path", "md"),
    [
        ("box", None),
        ("box", BOX),
        ("s.c", C),
        ("n", COUNT),
        ("n", {NAME: b"example.count", EXT_META: META}),  # a read's output (mapped keys)
        ("g", GEO),
    ],
)
def test_append_of_the_same_extension_or_plain_storage_succeeds_on_flagged_tables(
    tmp_path: Path, path: str, md: dict[bytes, bytes] | None
) -> None:
    ds = _make(tmp_path)
    ds.insert(_with_metadata(_rows(range(4, 5), "plain"), path, md))
    assert ds.count_rows() == 5
    assert _ext_keys(ds.semantic_schema.field(path).metadata) == TABLE_EXT[path]


@pytest.mark.parametrize("md", [None, OTHER], ids=["plain", "other"])
def test_legacy_tables_refuse_plain_storage_and_other_extensions_like_pylance(
    tmp_path: Path, md: dict[bytes, bytes] | None
) -> None:
    """Legacy rule (pylance 14 refuses both: tests/interop/test_extension_interop.py)."""
    ds = _make(tmp_path, flagged=False)
    with pytest.raises(SchemaMismatchError) as err:
        ds.insert(_with_metadata(_rows(range(4, 5)), "box", md))
    assert err.value.field_path == "box"
    ds.insert(_rows(range(4, 5)))  # the same extension appends
    assert ds.count_rows() == 5


# ---- the reserved prefix ---------------------------------------------------------------------


def _foo_table(md: dict[bytes, bytes], name: str = "x") -> pa.Table:
    return pa.table({name: pa.array([1, 2], pa.int32())}).cast(
        pa.schema([pa.field(name, pa.int32(), metadata=md)])
    )


@pytest.mark.parametrize("flagged", [True, False], ids=["flagged", "legacy"])
@pytest.mark.parametrize(
    "md", [{NAME: b"lance.foo"}, {LNAME: b"lance.foo"}], ids=["arrow", "layered"]
)
def test_reserved_prefix_refuses_unknown_lance_extensions_on_every_write(
    tmp_path: Path, flagged: bool, md: dict[bytes, bytes]
) -> None:
    """Spec "Reserved prefix": create, append, add_columns and alter_columns that
    introduce ``lance.foo`` fail before any data file is written, naming the field path and
    the name; the extensions Lance defines keep working."""
    uri = str(tmp_path / "new")
    nested = pa.table({"s": pa.array([{"x": 1}])}).cast(
        pa.schema([pa.field("s", pa.struct([pa.field("x", pa.int64(), metadata=md)]))])
    )
    with pytest.raises(ReservedExtensionNameError) as err:
        ls.write_dataset(nested, uri, semantic_types=flagged)
    assert (err.value.field_path, err.value.extension_name) == ("s.x", "lance.foo")
    assert "lance.foo" in str(err.value) and "s.x" in str(err.value)
    assert not os.path.exists(uri)

    ds = ls.write_dataset(_foo_table({}), str(tmp_path / "t"), semantic_types=flagged)
    files = set(os.listdir(os.path.join(ds.uri, "data")))
    # legacy appends ignore input field metadata other than the Arrow extension (as pylance),
    # so a layered key on appended data introduces nothing there
    ignored = not flagged and LNAME in md
    writes: list[Callable[[], object]] = [] if ignored else [lambda: ds.insert(_foo_table(md))]
    writes += [
        lambda: ds.add_columns(pa.field("y", pa.int32(), metadata=md)),
        lambda: ds.add_columns(
            lambda b: pa.RecordBatch.from_arrays(
                [b["x"]], schema=pa.schema([pa.field("z", pa.int32(), metadata=md)])
            ),
            read_columns=["x"],
        ),
    ]
    for write in writes:
        with pytest.raises(ReservedExtensionNameError) as err:
            write()
        assert err.value.extension_name == "lance.foo"
    assert set(os.listdir(os.path.join(ds.uri, "data"))) == files
    assert ds.version == ls.dataset(ds.uri).version == 1
    if ignored:
        ds.insert(_foo_table(md))
        assert dict(ds.semantic_schema.field("x").metadata) == {}


class _LanceFoo(pa.ExtensionType):
    def __init__(self) -> None:
        super().__init__(pa.int64(), "lance.foo")

    def __arrow_ext_serialize__(self) -> bytes:
        return b""

    @classmethod
    def __arrow_ext_deserialize__(cls, storage: pa.DataType, serialized: bytes) -> _LanceFoo:
        return cls()


@pytest.mark.parametrize("flagged", [True, False], ids=["flagged", "legacy"])
def test_reserved_prefix_alter_type_to_an_unknown_lance_extension_is_refused(
    tmp_path: Path, flagged: bool
) -> None:
    ds = ls.write_dataset(_foo_table({}), str(tmp_path / "t"), semantic_types=flagged)
    with pytest.raises(ReservedExtensionNameError) as err:
        ds.alter_columns({"path": "x", "data_type": _LanceFoo()})
    assert (err.value.field_path, err.value.extension_name) == ("x", "lance.foo")
    assert ds.version == 1


@pytest.mark.parametrize("flagged", [True, False], ids=["flagged", "legacy"])
def test_reserved_prefix_known_lance_extensions_keep_their_meaning(
    tmp_path: Path, flagged: bool
) -> None:
    values = lance.arrow.bfloat16_array([1.0, 2.0])
    table = pa.table(
        {
            "j": pa.array(['{"a":1}'], pa.json_()),
            "v": pa.FixedSizeListArray.from_arrays(values, 2),
        }
    )
    ds = ls.write_dataset(table, str(tmp_path / "t"), semantic_types=flagged)
    ds.insert(table)
    assert ds.semantic_schema.field("j").logical_type == "json"
    assert ds.semantic_schema.field("v").logical_type == "fixed_size_list:lance.bfloat16:2"
    assert ds.to_table().column("j").to_pylist() == ['{"a":1}'] * 2
    assert ds.to_table().column("v").type.value_type == values.type


def test_reserved_prefix_an_existing_lance_foo_column_of_a_pylance_table_stays_usable(
    tmp_path: Path,
) -> None:
    """pylance 14 accepts ``lance.foo``; a legacy table that already has it reads, appends
    (the name is not introduced) and overwrites with the same schema."""
    uri = str(tmp_path / "t")
    md = {NAME: b"lance.foo", EXT_META: META}
    lance.write_dataset(_foo_table(md), uri)
    ds = ls.dataset(uri)
    assert ds.schema.field("x").metadata == md
    ds.insert(_foo_table(md))
    assert ds.to_table().column("x").to_pylist() == [1, 2, 1, 2]
    assert lance.dataset(uri).count_rows() == 4
    with pytest.raises(ReservedExtensionNameError):
        ds.add_columns(pa.field("y", pa.int32(), metadata=md))
    ls.write_dataset(_foo_table(md), uri, mode="overwrite")
    assert ls.dataset(uri).semantic_schema.field("x").extension_name == "lance.foo"


# ---- open decision 2: layered extensions -----------------------------------------------------


def test_open_decision_2_layered_extension_over_json_keeps_its_keys_and_lance_json_output(
    tmp_path: Path,
) -> None:
    """json owns the Arrow slot (``arrow.json`` text, or ``lance.json`` JSONB): the layered
    keys stay under ``lance-schema:`` and are not mapped; the data file records them."""
    ds = _make(tmp_path)
    text = ds.schema.field("g")
    assert text.type == pa.json_(pa.string()) and _ext_keys(text.metadata) == GEO
    raw = ds.to_table(columns=["g"], output_encodings={"g": "lance.json"})
    jsonb = raw.schema.field("g")
    assert jsonb.type == pa.large_binary()
    assert _ext_keys(jsonb.metadata) == {**GEO, NAME: b"lance.json", EXT_META: b""}
    ds.insert(
        pa.table({"k": [9], "g": raw.column("g").slice(0, 1)}).cast(
            pa.schema([pa.field("k", pa.int64()), jsonb])
        )
    )  # the JSONB output appends back as pre-encoded lance.json
    assert ds.to_table(filter="k = 9").column("g").to_pylist() == ['{"k":0}']
    for path, f in _data_file_fields(ds):
        if path == "g":
            assert _file_ext_keys(f) == TABLE_EXT["g"]


def test_open_decision_2_layered_extension_on_a_plain_field_maps_to_the_arrow_keys(
    tmp_path: Path, registered: bool
) -> None:
    """A field without an Arrow extension of its own returns the layered extension under
    ``ARROW:extension:*`` in ``Dataset.schema``, scans, batches, take and fragment reads
    (a registered type is returned as such), and the table keeps the Lance keys."""
    ds = _make(tmp_path)
    expected = REGISTERED["example.count"](pa.int32()) if registered else pa.int32()
    reads = [
        ds.schema,
        ds.to_table().schema,
        next(iter(ds.to_batches())).schema,
        ds.take([1, 3]).schema,
        ds.get_fragments()[1].to_table().schema,
        ds.get_fragments()[1].take([0]).schema,
    ]
    for schema in reads:
        f = schema.field("n")
        assert f.type == expected
        assert _ext_keys(f.metadata) == (
            {} if registered else {NAME: b"example.count", EXT_META: META}
        )
    assert ds.take([3]).column("n").to_pylist() == [3]
    assert _ext_keys(ds.semantic_schema.field("n").metadata) == COUNT


def test_open_decision_2_legacy_tables_return_the_layered_keys_as_stored_like_pylance(
    tmp_path: Path,
) -> None:
    ds = _make(tmp_path, flagged=False)
    assert ds.schema.field("n").metadata == lance.dataset(ds.uri).schema.field("n").metadata
    assert _ext_keys(ds.schema.field("n").metadata) == COUNT
