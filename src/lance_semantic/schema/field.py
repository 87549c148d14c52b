"""The table schema as a tree of fields with Lance field ids (layer L2).

A Lance manifest stores the schema as a flat, pre-order list of ``lance.file.Field``
messages linked by ``parent_id`` (docs/format/lance-format-facts.md §4). :class:`TableSchema` is
the immutable tree built from that list; :meth:`TableSchema.flatten` gives the list back in the
same order.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from types import MappingProxyType

from ..types import BLOB, JSON, SemanticType, parse_any_logical_type
from ..types.blob_layouts import BLOB_V1_KEY, BLOB_V2_EXTENSION
from ..types.metadata_keys import EXTENSION_NAME_KEY, OUTPUT_ENCODING_KEY

__all__ = [
    "Field",
    "TableSchema",
    "EMPTY_METADATA",
    "ENCODING",
    "freeze_metadata",
    "is_blob",
    "is_blob_v1",
    "is_blob_v2",
    "semantic_type_of",
]

EMPTY_METADATA: Mapping[str, bytes] = MappingProxyType({})

#: ``lance.file.Field.encoding`` values (written like pylance 14 for parity; ignored on read)
ENCODING = {"NONE": 0, "PLAIN": 1, "VAR_BINARY": 2, "DICTIONARY": 3, "RLE": 4}


def freeze_metadata(
    metadata: Mapping[str, bytes] | Mapping[str, str] | Mapping[bytes, bytes] | None,
) -> Mapping[str, bytes]:
    """Return ``metadata`` as an immutable ``str -> bytes`` mapping (byte values kept as is)."""
    if not metadata:
        return EMPTY_METADATA
    out: dict[str, bytes] = {}
    for k, v in metadata.items():
        key = k.decode() if isinstance(k, bytes) else k
        out[key] = v if isinstance(v, bytes) else v.encode()
    return MappingProxyType(out)


@dataclass(frozen=True, slots=True)
class Field:
    """One field of the table schema (``lance.file.Field`` of the manifest).

    ``name``, the field ``id`` and its ``parent_id`` (-1 at the top level) as stored;
    ``logical_type`` is the string stored on disk (``string``, ``decimal:10:2``,
    ``struct``); ``nullable``; ``metadata`` the field's key-value metadata (``str`` ->
    ``bytes``, the output encoding among it); ``extension_name`` the manifest's extension
    slot; ``encoding``, ``dictionary`` and the ``unenforced_*`` key positions are kept as
    stored. ``path`` is the dotted path from the top level (``s.x``, ``l.item``,
    ``m.entries.key``). ``children`` follow Arrow child order.

    Examples
    --------
    >>> import pyarrow as pa, lance_semantic as ls
    >>> data = pa.table({"price": pa.array([1], pa.decimal128(10, 2)), "tags": [["a"]]})
    >>> schema = ls.write_dataset(data, "t.lance", data_storage_version="2.3").semantic_schema
    >>> price = schema.field("price")
    >>> price.name, price.id, price.parent_id, price.logical_type, price.nullable
    ('price', 0, -1, 'decimal:10:2', True)
    >>> [(f.path, f.id, f.parent_id, f.logical_type) for f in schema.field("tags").walk()]
    [('tags', 1, -1, 'list'), ('tags.item', 2, 1, 'string')]
    >>> ls.Field("n", 0, -1, "int64").path  # paths are set by TableSchema.of / from_flat
    ''
    """

    name: str
    id: int
    parent_id: int
    logical_type: str
    nullable: bool = True
    metadata: Mapping[str, bytes] = field(default_factory=lambda: EMPTY_METADATA)
    extension_name: str | None = None
    encoding: int = 0
    #: ``lance.file.Field.dictionary`` as (offset, length), or None when absent
    dictionary: tuple[int, int] | None = None
    unenforced_primary_key: bool = False
    unenforced_primary_key_position: int = 0
    unenforced_clustering_key_position: int = 0
    children: tuple[Field, ...] = ()
    path: str = ""

    @property
    def arrow_extension_name(self) -> str | None:
        """The extension in the Arrow slot: ``extension_name``, else the field's
        ``ARROW:extension:name`` metadata (pylance records it in one or both).

        >>> import pyarrow as pa, lance_semantic as ls
        >>> data = pa.table({"j": pa.array(['{"a": 1}'], pa.json_(pa.string())), "s": ["x"]})
        >>> schema = ls.write_dataset(data, "t.lance", data_storage_version="2.3").semantic_schema
        >>> schema.field("j").arrow_extension_name, schema.field("s").arrow_extension_name
        ('lance.json', None)
        """
        if self.extension_name:
            return self.extension_name
        raw = self.metadata.get(EXTENSION_NAME_KEY)
        return raw.decode() if raw is not None else None

    @property
    def semantic_type(self) -> SemanticType:
        """The value domain this field's ``logical_type`` (and blob markers) name; its
        ``str()`` is the canonical name (``large_string`` -> ``string``).

        >>> import pyarrow as pa, lance_semantic as ls
        >>> data = pa.table({"s": pa.array(["a"], pa.large_string())})
        >>> field = ls.write_dataset(data, "t.lance").semantic_schema.field("s")
        >>> field.logical_type, str(field.semantic_type), field.semantic_type
        ('large_string', 'string', String())
        """
        return semantic_type_of(self)

    def with_children(self, children: Sequence[Field]) -> Field:
        """This field with other ``children`` (paths are not recomputed: build the schema
        with :meth:`TableSchema.of` for that).

        >>> import lance_semantic as ls
        >>> st = ls.Field("st", 0, -1, "struct")
        >>> [c.name for c in st.with_children([ls.Field("x", 1, 0, "int64")]).children]
        ['x']
        """
        return replace(self, children=tuple(children))

    def walk(self) -> Iterator[Field]:
        """This field and all its descendants, in pre-order.

        >>> import pyarrow as pa, lance_semantic as ls
        >>> data = pa.table({"id": [1], "st": [{"x": 1, "s": "a"}], "l": [["a"]]})
        >>> ts = ls.write_dataset(data, "t.lance", data_storage_version="2.3").semantic_schema
        >>> [f.path for f in ts.field("st").walk()]
        ['st', 'st.x', 'st.s']
        """
        yield self
        for child in self.children:
            yield from child.walk()

    @property
    def output_encoding(self) -> str | None:
        """The field's stored output encoding entry (``lance-schema:output-encoding``), or
        None: reads then return the semantic type's default layout.

        >>> import pyarrow as pa, lance_semantic as ls
        >>> data = pa.table({"a": pa.array(["x"], pa.large_string()), "b": ["y"]})
        >>> schema = ls.write_dataset(data, "t.lance", data_storage_version="2.3").semantic_schema
        >>> schema.field("a").output_encoding, schema.field("b").output_encoding
        ('large_utf8', None)
        """
        raw = self.metadata.get(OUTPUT_ENCODING_KEY)
        return raw.decode() if raw is not None else None


def is_blob_v1(field: Field) -> bool:
    """A ``large_binary`` field marked ``lance-encoding:blob`` (pylance treats the key as the
    marker whatever its value)."""
    return BLOB_V1_KEY in field.metadata and field.arrow_extension_name != BLOB_V2_EXTENSION


def is_blob_v2(field: Field) -> bool:
    return field.arrow_extension_name == BLOB_V2_EXTENSION


def is_blob(field: Field) -> bool:
    return is_blob_v1(field) or is_blob_v2(field)


def semantic_type_of(field: Field) -> SemanticType:
    """The semantic type a field's ``logical_type`` (and blob markers) name."""
    if is_blob(field):
        return BLOB
    if field.logical_type == "json":
        return JSON
    return parse_any_logical_type(field.logical_type, path=field.path)[0]


@dataclass(frozen=True)
class TableSchema:
    """The immutable field tree of a table plus its schema metadata.

    ``fields`` are the top-level fields; iterating gives every field in pre-order and
    ``len()`` counts the top-level ones. ``Dataset.semantic_schema`` is one.

    >>> import pyarrow as pa, lance_semantic as ls
    >>> data = pa.table({"id": [1], "st": [{"x": 1, "s": "a"}]})
    >>> ts = ls.write_dataset(data, "t.lance", data_storage_version="2.3").semantic_schema
    >>> len(ts), [f.path for f in ts], [f.logical_type for f in ts]
    (2, ['id', 'st', 'st.x', 'st.s'], ['int64', 'struct', 'int64', 'string'])
    """

    fields: tuple[Field, ...]
    metadata: Mapping[str, bytes] = field(default_factory=lambda: EMPTY_METADATA)

    @classmethod
    def from_flat(
        cls, flat: Sequence[Field], metadata: Mapping[str, bytes] = EMPTY_METADATA
    ) -> TableSchema:
        """Build the tree from a pre-order list linked by ``parent_id`` (children ignored).

        >>> import lance_semantic as ls
        >>> flat = [ls.Field("st", 0, -1, "struct"), ls.Field("x", 1, 0, "int64")]
        >>> [f.path for f in ls.TableSchema.from_flat(flat)]
        ['st', 'st.x']
        """
        by_parent: dict[int, list[Field]] = {}
        for f in flat:
            by_parent.setdefault(f.parent_id, []).append(f)

        def build(f: Field, prefix: str) -> Field:
            path = f"{prefix}.{f.name}" if prefix else f.name
            kids = tuple(build(c, path) for c in by_parent.get(f.id, ()))
            return replace(f, children=kids, path=path)

        tops = tuple(build(f, "") for f in by_parent.get(-1, ()))
        return cls(tops, metadata)

    @classmethod
    def of(
        cls, fields: Sequence[Field], metadata: Mapping[str, bytes] = EMPTY_METADATA
    ) -> TableSchema:
        """Build from top-level fields, (re)computing every ``path``.

        >>> import lance_semantic as ls
        >>> st = ls.Field("st", 0, -1, "struct", children=(ls.Field("x", 1, 0, "int64"),))
        >>> [f.path for f in ls.TableSchema.of([st])]
        ['st', 'st.x']
        """

        def fix(f: Field, prefix: str) -> Field:
            path = f"{prefix}.{f.name}" if prefix else f.name
            return replace(f, path=path, children=tuple(fix(c, path) for c in f.children))

        return cls(tuple(fix(f, "") for f in fields), metadata)

    def flatten(self) -> list[Field]:
        """All fields in pre-order, as a manifest stores them.

        >>> import pyarrow as pa, lance_semantic as ls
        >>> data = pa.table({"id": [1], "st": [{"x": 1, "s": "a"}], "l": [["a"]]})
        >>> ts = ls.write_dataset(data, "t.lance", data_storage_version="2.3").semantic_schema
        >>> [(f.id, f.parent_id, f.name) for f in ts.flatten()]
        [(0, -1, 'id'), (1, -1, 'st'), (2, 1, 'x'), (3, 1, 's'), (4, -1, 'l'), (5, 4, 'item')]
        """
        return [f for top in self.fields for f in top.walk()]

    def __iter__(self) -> Iterator[Field]:
        for top in self.fields:
            yield from top.walk()

    def __len__(self) -> int:
        return len(self.fields)

    @cached_property
    def _by_id(self) -> dict[int, Field]:
        return {f.id: f for f in self}

    @cached_property
    def _by_path(self) -> dict[str, Field]:
        return {f.path: f for f in self}

    def field(self, path: str) -> Field:
        """The field at a dotted ``path``; raises ``KeyError`` naming the path.

        List items are ``<list>.item`` (the item field's name); map parts are
        ``<map>.key`` / ``<map>.value``, or in the long form of the stored tree
        ``<map>.entries.key`` / ``<map>.entries.value`` (``Field.path`` spells that one).
        Both forms nest: ``s.m.value``, ``l.item.value`` for a map inside a list.

        Examples
        --------
        >>> kv = [Field("key", 3, 2, "string", False), Field("value", 4, 2, "int64")]
        >>> entries = Field("entries", 2, 1, "struct", False, children=tuple(kv))
        >>> m = Field("m", 1, 0, "map", children=(entries,))
        >>> ts = TableSchema.of([Field("s", 0, -1, "struct", children=(m,))])
        >>> ts.field("s.m.value").path, ts.field("s.m.entries.key").path
        ('s.m.entries.value', 's.m.entries.key')
        """
        found = self._by_path.get(path)
        if found is None:
            found = _resolve(self.fields, path)
        if found is None:
            raise KeyError(f"no field '{path}' in schema")
        return found

    def field_by_id(self, field_id: int) -> Field:
        """The field with id ``field_id`` at any depth; ``KeyError`` if there is none.

        >>> import pyarrow as pa, lance_semantic as ls
        >>> data = pa.table({"id": [1], "st": [{"x": 1, "s": "a"}], "l": [["a"]]})
        >>> ts = ls.write_dataset(data, "t.lance", data_storage_version="2.3").semantic_schema
        >>> ts.field_by_id(2).path, ts.field_by_id(5).path
        ('st.x', 'l.item')
        """
        return self._by_id[field_id]

    def has_id(self, field_id: int) -> bool:
        """Whether a field of the schema has id ``field_id``.

        >>> import pyarrow as pa, lance_semantic as ls
        >>> data = pa.table({"id": [1], "st": [{"x": 1, "s": "a"}], "l": [["a"]]})
        >>> ts = ls.write_dataset(data, "t.lance", data_storage_version="2.3").semantic_schema
        >>> ts.has_id(5), ts.has_id(6)
        (True, False)
        """
        return field_id in self._by_id

    def top_level_of(self, field_id: int) -> Field | None:
        """The top-level field containing ``field_id`` (or None if the id is not in the schema).

        >>> import pyarrow as pa, lance_semantic as ls
        >>> data = pa.table({"id": [1], "st": [{"x": 1, "s": "a"}], "l": [["a"]]})
        >>> ts = ls.write_dataset(data, "t.lance", data_storage_version="2.3").semantic_schema
        >>> ts.top_level_of(3).name, ts.top_level_of(0).name, ts.top_level_of(9)
        ('st', 'id', None)
        """
        f = self._by_id.get(field_id)
        while f is not None and f.parent_id != -1:
            f = self._by_id.get(f.parent_id)
        return f

    @property
    def names(self) -> list[str]:
        """The names of the top-level fields, in order.

        >>> import pyarrow as pa, lance_semantic as ls
        >>> data = pa.table({"id": [1], "st": [{"x": 1, "s": "a"}], "l": [["a"]]})
        >>> ts = ls.write_dataset(data, "t.lance", data_storage_version="2.3").semantic_schema
        >>> ts.names
        ['id', 'st', 'l']
        """
        return [f.name for f in self.fields]

    @property
    def max_field_id(self) -> int:
        """The largest field id in the schema (-1 when it has no field).

        >>> import pyarrow as pa, lance_semantic as ls
        >>> data = pa.table({"id": [1], "st": [{"x": 1, "s": "a"}], "l": [["a"]]})
        >>> ts = ls.write_dataset(data, "t.lance", data_storage_version="2.3").semantic_schema
        >>> ts.max_field_id, ls.TableSchema(()).max_field_id
        (5, -1)
        """
        return max((f.id for f in self), default=-1)

    def select(self, names: Sequence[str]) -> TableSchema:
        """A schema of the named top-level fields, in the given order.

        >>> import pyarrow as pa, lance_semantic as ls
        >>> data = pa.table({"id": [1], "st": [{"x": 1, "s": "a"}], "l": [["a"]]})
        >>> ts = ls.write_dataset(data, "t.lance", data_storage_version="2.3").semantic_schema
        >>> ts.select(["l", "id"]).names
        ['l', 'id']
        """
        by_name = {f.name: f for f in self.fields}
        return TableSchema(tuple(by_name[n] for n in names), self.metadata)


def _resolve(candidates: Sequence[Field], rest: str) -> Field | None:
    """The field at ``rest`` below ``candidates``, a map's parts also reachable without the
    ``entries`` step (names may contain dots: every split is tried)."""
    for f in candidates:
        if rest == f.name:
            return f
        if rest.startswith(f.name + "."):
            below: Sequence[Field] = f.children
            if f.logical_type == "map" and len(f.children) == 1:
                below = (*f.children, *f.children[0].children)
            found = _resolve(below, rest[len(f.name) + 1 :])
            if found is not None:
                return found
    return None
