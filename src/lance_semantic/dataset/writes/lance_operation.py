"""``ls.LanceOperation``: the changes a two-phase commit publishes, with pylance's names and
arguments (layer L5; pylance ``lance.LanceOperation``).

Each operation is a frozen dataclass that only describes a change; ``ls.Dataset.commit``
turns it into the manifest operation it is and publishes it with the usual put-if-absent,
rebase and conflict rules. Fragment arguments take :class:`FragmentMetadata` (from
``ls.fragment.write_fragments``), a fragment's ``.metadata`` or pylance's
``FragmentMetadata``; lists are kept as tuples.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TypeAlias

import pyarrow as pa

from ...manifest import UpdateMap
from ...schema import TableSchema
from ..core import Index
from .fragment_metadata import FragmentMetadata, as_fragment_list

__all__ = ["LanceOperation", "AnyOperation"]


def _set(obj: object, name: str, value: object) -> None:
    object.__setattr__(obj, name, value)


def _fragments(obj: object, name: str) -> None:
    _set(obj, name, as_fragment_list(getattr(obj, name), name=name))


def _ints(obj: object, name: str) -> None:
    values = getattr(obj, name)
    if isinstance(values, str | bytes) or not isinstance(values, Iterable):
        raise TypeError(f"{name} must be a list of ints, got {type(values).__name__}")
    out = []
    for v in values:
        if isinstance(v, bool) or not hasattr(v, "__index__"):
            raise TypeError(f"{name} must hold ints, got {type(v).__name__}")
        out.append(int(v))
    _set(obj, name, tuple(out))


def _schema(value: object, name: str, *, arrow: bool) -> None:
    allowed: tuple[type, ...] = (TableSchema, pa.Schema) if arrow else (TableSchema,)
    if not isinstance(value, allowed):
        wanted = "a pyarrow.Schema or a TableSchema" if arrow else "a TableSchema"
        raise TypeError(f"{name} must be {wanted}, got {type(value).__name__}")


class LanceOperation:
    """The operations ``ls.Dataset.commit`` publishes (pylance's ``LanceOperation``).

    >>> import pyarrow as pa
    >>> op = LanceOperation.Overwrite(pa.schema([("a", pa.int64())]), [])
    >>> op.fragments
    ()
    """

    @dataclass(frozen=True, slots=True)
    class Overwrite:
        """Create the table, or replace its schema and rows.

        ``new_schema`` (a ``pyarrow.Schema``) is read as ``write_dataset`` reads its
        input's schema: field ids in pre-order, and on a flagged table canonical types with
        the schema's layouts recorded as output encodings where they differ from the
        default. A :class:`TableSchema` is taken with its field ids as given.

        >>> import pyarrow as pa, lance_semantic as ls
        >>> data = pa.table({"s": ["a", "b"]})
        >>> fragments = ls.fragment.write_fragments(data, "t.lance")
        >>> op = ls.LanceOperation.Overwrite(data.schema, fragments)
        >>> ls.Dataset.commit("t.lance", op).to_table().to_pydict()
        {'s': ['a', 'b']}
        """

        new_schema: pa.Schema | TableSchema
        fragments: Sequence[FragmentMetadata]

        def __post_init__(self) -> None:
            _schema(self.new_schema, "new_schema", arrow=True)
            _fragments(self, "fragments")

    @dataclass(frozen=True, slots=True)
    class Append:
        """Add new fragments to the table.

        >>> import pyarrow as pa, lance_semantic as ls
        >>> ds = ls.write_dataset(pa.table({"id": [1, 2, 3]}), "t.lance", max_rows_per_file=2)
        >>> fragments = ls.fragment.write_fragments(pa.table({"id": [4]}), "t.lance")
        >>> ls.Dataset.commit("t.lance", ls.LanceOperation.Append(fragments), 1).count_rows()
        4
        """

        fragments: Sequence[FragmentMetadata]

        def __post_init__(self) -> None:
            _fragments(self, "fragments")

    @dataclass(frozen=True, slots=True)
    class Delete:
        """Rows deleted: fragments with new deletion files, fragments removed whole.

        >>> import pyarrow as pa, lance_semantic as ls
        >>> ds = ls.write_dataset(pa.table({"id": [1, 2, 3]}), "t.lance", max_rows_per_file=2)
        >>> op = ls.LanceOperation.Delete([], deleted_fragment_ids=[1], predicate="id = 3")
        >>> ls.Dataset.commit("t.lance", op, read_version=1).to_table().to_pydict()
        {'id': [1, 2]}
        """

        updated_fragments: Sequence[FragmentMetadata]
        deleted_fragment_ids: Sequence[int]
        predicate: str

        def __post_init__(self) -> None:
            _fragments(self, "updated_fragments")
            _ints(self, "deleted_fragment_ids")
            if not isinstance(self.predicate, str):
                raise TypeError(f"predicate must be a str, got {type(self.predicate).__name__}")

    @dataclass(frozen=True, slots=True)
    class Update:
        """Rows rewritten: fragments removed, updated (new deletion files or columns) and
        added; ``update_mode`` ``"rewrite_rows"`` (default) or ``"rewrite_columns"``.

        >>> import pyarrow as pa, lance_semantic as ls
        >>> ds = ls.write_dataset(pa.table({"id": [1, 2, 3]}), "t.lance", max_rows_per_file=2)
        >>> new = ls.fragment.write_fragments(pa.table({"id": [30]}), "t.lance")
        >>> op = ls.LanceOperation.Update(removed_fragment_ids=[1], new_fragments=new)
        >>> ls.Dataset.commit("t.lance", op, read_version=1).to_table().to_pydict()
        {'id': [1, 2, 30]}
        """

        removed_fragment_ids: Sequence[int] = ()
        updated_fragments: Sequence[FragmentMetadata] = ()
        new_fragments: Sequence[FragmentMetadata] = ()
        fields_modified: Sequence[int] = ()
        fields_for_preserving_frag_bitmap: Sequence[int] = ()
        update_mode: str = ""

        def __post_init__(self) -> None:
            _ints(self, "removed_fragment_ids")
            _fragments(self, "updated_fragments")
            _fragments(self, "new_fragments")
            _ints(self, "fields_modified")
            _ints(self, "fields_for_preserving_frag_bitmap")
            if self.update_mode not in ("", "rewrite_rows", "rewrite_columns"):
                raise ValueError(
                    f"update_mode must be 'rewrite_rows' or 'rewrite_columns', "
                    f"got {self.update_mode!r}"
                )

    @dataclass(frozen=True, slots=True)
    class Merge:
        """Columns added or rewritten: every fragment with its new files, and the schema
        (a :class:`TableSchema`, or a ``pyarrow.Schema`` whose columns keep the field ids
        the table gives them and whose new columns get new ids).

        >>> import pyarrow as pa, lance_semantic as ls
        >>> ds = ls.write_dataset(pa.table({"id": [1, 2]}), "t.lance")
        >>> fragments = [f.metadata for f in ds.get_fragments()]
        >>> op = ls.LanceOperation.Merge(fragments, ds.schema.append(pa.field("x", pa.int64())))
        >>> ls.Dataset.commit("t.lance", op, read_version=1).to_table().to_pydict()
        {'id': [1, 2], 'x': [None, None]}
        """

        fragments: Sequence[FragmentMetadata]
        schema: TableSchema | pa.Schema
        preserves_nullability: bool = False

        def __post_init__(self) -> None:
            _fragments(self, "fragments")
            _schema(self.schema, "schema", arrow=True)

    @dataclass(frozen=True, slots=True)
    class Project:
        """Columns dropped or renamed: the new schema (a :class:`TableSchema`).

        >>> import pyarrow as pa, lance_semantic as ls
        >>> ds = ls.write_dataset(pa.table({"id": [1], "x": [2]}), "t.lance")
        >>> op = ls.LanceOperation.Project(ds.semantic_schema.select(["id"]))
        >>> ls.Dataset.commit("t.lance", op, read_version=1).schema.names
        ['id']
        """

        schema: TableSchema
        preserves_nullability: bool = False

        def __post_init__(self) -> None:
            _schema(self.schema, "schema", arrow=False)

    @dataclass(frozen=True, slots=True)
    class Restore:
        """Make ``version`` the newest version again.

        >>> import pyarrow as pa, lance_semantic as ls
        >>> ds = ls.write_dataset(pa.table({"id": [1]}), "t.lance")
        >>> _ = ds.insert(pa.table({"id": [2]}))
        >>> restored = ls.Dataset.commit("t.lance", ls.LanceOperation.Restore(1))
        >>> restored.version, restored.count_rows()
        (3, 1)
        """

        version: int

        def __post_init__(self) -> None:
            if isinstance(self.version, bool) or not hasattr(self.version, "__index__"):
                raise TypeError(f"version must be an int, got {type(self.version).__name__}")
            _set(self, "version", int(self.version))

    @dataclass(frozen=True, slots=True)
    class RewriteGroup:
        """Old fragments replaced by new ones holding the same rows (see
        :class:`Rewrite`).

        >>> import pyarrow as pa, lance_semantic as ls
        >>> old = ls.fragment.write_fragments(pa.table({"id": [1]}), "t.lance")
        >>> new = ls.fragment.write_fragments(pa.table({"id": [1]}), "t.lance")
        >>> group = ls.LanceOperation.RewriteGroup(old, new)
        >>> len(group.old_fragments), len(group.new_fragments)
        (1, 1)
        """

        old_fragments: Sequence[FragmentMetadata]
        new_fragments: Sequence[FragmentMetadata]

        def __post_init__(self) -> None:
            _fragments(self, "old_fragments")
            _fragments(self, "new_fragments")

    @dataclass(frozen=True, slots=True)
    class RewrittenIndex:
        """An index a Rewrite remaps (pylance's ``LanceOperation.RewrittenIndex``): the
        entry ``old_id`` becomes ``new_id``, whose files the caller wrote under
        ``_indices/<new_id>/`` (recorded with their sizes at commit, as pylance records
        them), with these details and index version.

        >>> import lance_semantic as ls
        >>> ls.LanceOperation.RewrittenIndex("a", "b", "/lance.table.BTreeIndexDetails",
        ...     b"", 0).new_id
        'b'
        """

        old_id: str
        new_id: str
        new_details_type_url: str
        new_details_value: bytes
        new_index_version: int

    @dataclass(frozen=True, slots=True)
    class Rewrite:
        """Fragments rearranged without changing rows (compaction). New fragments whose ids
        are all 0 get ids reserved for them (a ``ReserveFragments`` commit first, as
        ``compact_files`` makes). ``rewritten_indices`` (``RewrittenIndex``, ours or
        pylance's) swap index entries for remapped ones, as pylance commits them; without
        them the indices stay as they were (the new fragments are searched flat), as in
        pylance.

        >>> import pyarrow as pa, lance_semantic as ls
        >>> ds = ls.write_dataset(pa.table({"id": [1, 2, 3]}), "t.lance", max_rows_per_file=2)
        >>> old = [f.metadata for f in ds.get_fragments()]
        >>> new = ls.fragment.write_fragments(ds.to_table(), "t.lance")  # the same rows
        >>> op = ls.LanceOperation.Rewrite([ls.LanceOperation.RewriteGroup(old, new)])
        >>> ds = ls.Dataset.commit("t.lance", op, read_version=1)
        >>> [f.fragment_id for f in ds.get_fragments()], ds.to_table().to_pydict()
        ([2], {'id': [1, 2, 3]})
        """

        groups: Sequence[LanceOperation.RewriteGroup]
        rewritten_indices: Sequence[object] = ()

        def __post_init__(self) -> None:
            groups = tuple(self.groups)
            if not all(isinstance(g, LanceOperation.RewriteGroup) for g in groups):
                raise TypeError("groups must hold LanceOperation.RewriteGroup")
            _set(self, "groups", groups)
            _set(self, "rewritten_indices", tuple(self.rewritten_indices))

    UpdateMap = UpdateMap

    @dataclass(frozen=True, slots=True)
    class CreateIndex:
        """Index segments added and removed (pylance's ``LanceOperation.CreateIndex``):
        ``new_indices`` / ``removed_indices`` hold :class:`ls.Index` objects, from
        ``create_index_uncommitted`` or ``describe``-d entries, or pylance's
        ``lance.dataset.Index``. ``drop_index`` and ``optimize_indices`` commit this.

        >>> import numpy as np, pyarrow as pa, lance_semantic as ls
        >>> x = np.random.default_rng(0).standard_normal((600, 8)).astype(np.float32)
        >>> vec = pa.FixedSizeListArray.from_arrays(pa.array(x.ravel()), 8)
        >>> ds = ls.write_dataset(pa.table({"vec": vec}), "t.lance")
        >>> index = ds.create_index_uncommitted("vec", "IVF_FLAT", num_partitions=2,
        ...                                     fragment_ids=[0])
        >>> op = ls.LanceOperation.CreateIndex(new_indices=[index], removed_indices=[])
        >>> [i["name"] for i in ls.Dataset.commit("t.lance", op, read_version=1).list_indices()]
        ['vec_idx']
        """

        new_indices: Sequence[Index]
        removed_indices: Sequence[Index]

        def __post_init__(self) -> None:
            for name in ("new_indices", "removed_indices"):
                value = getattr(self, name)
                if isinstance(value, str | bytes) or not isinstance(value, Iterable):
                    raise TypeError(f"{name} must be a list of Index, got {type(value).__name__}")
                _set(self, name, tuple(value))

    @dataclass(frozen=True, slots=True)
    class UpdateConfig:
        """Config, table metadata, schema metadata and field metadata (keyed by field id)
        changes, each an :class:`UpdateMap` or None.

        >>> import pyarrow as pa, lance_semantic as ls
        >>> ds = ls.write_dataset(pa.table({"id": [1]}), "t.lance")
        >>> update = ls.LanceOperation.UpdateMap({"owner": "ops"})
        >>> op = ls.LanceOperation.UpdateConfig(table_metadata_updates=update)
        >>> dict(ls.Dataset.commit("t.lance", op, read_version=1).manifest.table_metadata)
        {'owner': 'ops'}
        """

        config_updates: UpdateMap | None = None
        table_metadata_updates: UpdateMap | None = None
        schema_metadata_updates: UpdateMap | None = None
        field_metadata_updates: Mapping[int, UpdateMap] | None = field(default=None)

        def __post_init__(self) -> None:
            for name in ("config_updates", "table_metadata_updates", "schema_metadata_updates"):
                value = getattr(self, name)
                if value is not None and not isinstance(value, UpdateMap):
                    raise TypeError(f"{name} must be a LanceOperation.UpdateMap or None")
            if self.field_metadata_updates is not None:
                _set(
                    self,
                    "field_metadata_updates",
                    MappingProxyType(dict(self.field_metadata_updates)),
                )


AnyOperation: TypeAlias = (
    LanceOperation.Overwrite
    | LanceOperation.Append
    | LanceOperation.Delete
    | LanceOperation.Update
    | LanceOperation.Merge
    | LanceOperation.Project
    | LanceOperation.Restore
    | LanceOperation.Rewrite
    | LanceOperation.UpdateConfig
    | LanceOperation.CreateIndex
)
