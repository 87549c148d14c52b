"""Fragments written but not yet committed, as the two-phase API hands them around (layer L5).

:class:`FragmentMetadata` is what ``ls.fragment.write_fragments`` returns and what the
operations of ``ls.LanceOperation`` take. It has the shape of pylance's
``lance.fragment.FragmentMetadata`` (``id``, ``files``, ``physical_rows``,
``deletion_file``, ``to_json`` / ``from_json``), is a manifest :class:`Fragment` (so it goes
wherever one goes) and pickles, so workers can send it back to the process that commits.

It also records, per data file, the Arrow schema the file was written with: its exact
layout (on a flagged table each file may hold a different accepted layout of a column's
semantic type). The commit checks each file against the table with it, without reading the
file. Fragments that do not carry it (pylance's, or built by hand) are committed unchecked,
as pylance commits them.
"""

from __future__ import annotations

import base64
import json
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import pyarrow as pa

from ...errors import NotSupportedYetError
from ...manifest import DataFile, DeletionFile, Fragment, fragment_passthrough

__all__ = [
    "FragmentMetadata",
    "DataFile",
    "DeletionFile",
    "as_fragment_metadata",
    "as_fragment_list",
    "plain",
]

#: pylance's name of an Arrow-IPC deletion file type, and ours
_TO_PYLANCE = {"arrow": "array", "bitmap": "bitmap"}
_FROM_PYLANCE = {"array": "arrow", "arrow": "arrow", "bitmap": "bitmap"}


@dataclass(frozen=True, slots=True)
class FragmentMetadata(Fragment):
    """A fragment and its data files (pylance's ``FragmentMetadata``).

    ``id`` is 0 until a commit assigns it. ``file_schemas`` holds, for each of ``files``,
    the Arrow schema its rows were written with (``None`` when unknown).

    >>> import pickle
    >>> f = FragmentMetadata(0, (DataFile("a.lance", (0,), (0,), 2, 2),), 3)
    >>> pickle.loads(pickle.dumps(f)) == f, f.num_rows
    (True, 3)
    >>> FragmentMetadata.from_json(json.dumps(f.to_json())) == f
    True
    """

    file_schemas: tuple[pa.Schema | None, ...] = field(default=(), repr=False)

    @property
    def num_deletions(self) -> int:
        """Rows marked deleted (pylance's name).

        >>> import pyarrow as pa, lance_semantic as ls
        >>> fragment = ls.fragment.write_fragments(pa.table({"id": [1, 2]}), "t.lance")[0]
        >>> fragment.num_deletions, fragment.physical_rows
        (0, 2)
        """
        return self.num_deleted_rows

    def schema_of(self, index: int) -> pa.Schema | None:
        """The Arrow schema data file ``index`` was written with, if known.

        >>> import pyarrow as pa, lance_semantic as ls
        >>> fragment = ls.fragment.write_fragments(pa.table({"id": [1, 2]}), "t.lance")[0]
        >>> fragment.schema_of(0), fragment.schema_of(1)
        (id: int64, None)
        """
        return self.file_schemas[index] if index < len(self.file_schemas) else None

    def to_json(self) -> dict[str, Any]:
        """A JSON-serializable dict with pylance's keys (pylance's ``from_json`` reads it);
        the file schemas go under ``file_schemas`` as base64 Arrow IPC.

        >>> import pyarrow as pa, lance_semantic as ls
        >>> fragment = ls.fragment.write_fragments(pa.table({"id": [1, 2]}), "t.lance")[0]
        >>> data = fragment.to_json()
        >>> sorted(data), data["physical_rows"], data["files"][0]["fields"]
        (['deletion_file', 'file_schemas', 'files', 'id', 'physical_rows'], 2, [0])
        """
        d = self.deletion_file
        return {
            "id": self.id,
            "files": [
                {
                    "path": f.path,
                    "fields": list(f.fields),
                    "column_indices": list(f.column_indices),
                    "file_major_version": f.file_major_version,
                    "file_minor_version": f.file_minor_version,
                    "file_size_bytes": f.file_size_bytes,
                    "base_id": f.base_id,
                }
                for f in self.files
            ],
            "physical_rows": self.physical_rows,
            "deletion_file": None
            if d is None
            else {
                "read_version": d.read_version,
                "id": d.id,
                "file_type": _TO_PYLANCE[d.file_type],
                "num_deleted_rows": d.num_deleted_rows,
                "base_id": d.base_id,
            },
            "file_schemas": [
                None if s is None else base64.b64encode(s.serialize().to_pybytes()).decode()
                for s in self.file_schemas
            ],
            # what the fragment's protobuf holds that is not modelled (row-id sequences,
            # overlays), kept so that nothing is lost on the way back (pylance ignores it)
            **(
                {"passthrough": base64.b64encode(self.passthrough).decode()}
                if self.passthrough
                else {}
            ),
        }

    def data_files(self) -> list[DataFile]:
        """The fragment's data files: deprecated, as in pylance (use :attr:`files`).

        >>> import warnings
        >>> import pyarrow as pa, lance_semantic as ls
        >>> fragment = ls.fragment.write_fragments(pa.table({"id": [1, 2]}), "t.lance")[0]
        >>> with warnings.catch_warnings(record=True) as seen:
        ...     warnings.simplefilter("always")
        ...     files = fragment.data_files()
        >>> [f.fields for f in files], seen[0].category.__name__
        ([(0,)], 'DeprecationWarning')
        """
        warnings.warn(
            "FragmentMetadata.data_files is deprecated. Use .files instead.",
            DeprecationWarning,
            stacklevel=2,
        )
        return list(self.files)

    @staticmethod
    def from_json(json_data: str | Mapping[str, Any]) -> FragmentMetadata:
        """The fragment of a :meth:`to_json` dict (or its JSON text; pylance's too).

        >>> import json
        >>> import pyarrow as pa, lance_semantic as ls
        >>> fragment = ls.fragment.write_fragments(pa.table({"id": [1, 2]}), "t.lance")[0]
        >>> ls.fragment.FragmentMetadata.from_json(json.dumps(fragment.to_json())) == fragment
        True
        """
        data = json.loads(json_data) if isinstance(json_data, str | bytes) else json_data
        files = tuple(
            DataFile(
                path=f["path"],
                fields=tuple(f["fields"]),
                column_indices=tuple(f.get("column_indices") or ()),
                file_major_version=f.get("file_major_version", 0),
                file_minor_version=f.get("file_minor_version", 0),
                file_size_bytes=f.get("file_size_bytes") or 0,
                base_id=f.get("base_id"),
            )
            for f in data["files"]
        )
        d = data.get("deletion_file")
        deletion = None
        if d is not None:
            deletion = DeletionFile(
                file_type=_deletion_type(d["file_type"]),
                read_version=d["read_version"],
                id=d["id"],
                num_deleted_rows=d.get("num_deleted_rows") or 0,
                base_id=d.get("base_id"),
            )
        for key in ("row_id_meta", "created_at_version_meta", "last_updated_at_version_meta"):
            if data.get(key) is not None:
                raise NotSupportedYetError(f"fragments with {key} (stable row ids)")
        if data.get("overlays"):
            raise NotSupportedYetError("fragments with data overlays")
        schemas = tuple(
            None if s is None else pa.ipc.read_schema(pa.py_buffer(base64.b64decode(s)))
            for s in data.get("file_schemas") or ()
        )
        return FragmentMetadata(
            id=data["id"],
            files=files,
            physical_rows=data["physical_rows"],
            deletion_file=deletion,
            passthrough=_passthrough(data.get("passthrough")),
            file_schemas=schemas,
        )


def _passthrough(text: object) -> bytes:
    """The ``passthrough`` of a fragment's JSON (base64): checked, since it is merged into
    the fragment's manifest entry as it is."""
    if text is None or text == "":
        return b""
    if not isinstance(text, str):
        raise ValueError(f"fragment JSON: passthrough must be base64 text, got {text!r}")
    try:
        raw = base64.b64decode(text, validate=True)
    except ValueError as e:
        raise ValueError(f"fragment JSON: passthrough is not base64: {e}") from None
    return fragment_passthrough(raw, "fragment JSON: passthrough")


def _deletion_type(name: str) -> Literal["arrow", "bitmap"]:
    found = _FROM_PYLANCE.get(str(name).lower())
    if found == "arrow":
        return "arrow"
    if found == "bitmap":
        return "bitmap"
    raise ValueError(f"unknown deletion file type {name!r}")


def as_fragment_metadata(obj: object, *, name: str = "fragments") -> FragmentMetadata:
    """``obj`` as a :class:`FragmentMetadata`: ours, a manifest fragment (``get_fragments()``'s
    ``.metadata``), or pylance's ``lance.fragment.FragmentMetadata``."""
    if isinstance(obj, FragmentMetadata):
        return obj
    if isinstance(obj, Fragment):
        return FragmentMetadata(
            obj.id, obj.files, obj.physical_rows, obj.deletion_file, obj.passthrough
        )
    if all(hasattr(obj, a) for a in ("id", "files", "physical_rows")):  # pylance's
        to_json = getattr(obj, "to_json", None)
        if callable(to_json):
            return FragmentMetadata.from_json(to_json())
    raise TypeError(
        f"{name} must hold FragmentMetadata (from ls.fragment.write_fragments or a "
        f"fragment's .metadata), got {type(obj).__name__}"
    )


def as_fragment_list(values: object, *, name: str = "fragments") -> tuple[FragmentMetadata, ...]:
    """A list (any iterable) of fragment-likes as a tuple of :class:`FragmentMetadata`."""
    if isinstance(values, str | bytes | Mapping) or not isinstance(values, Iterable):
        raise TypeError(f"{name} must be a list of FragmentMetadata, got {type(values).__name__}")
    return tuple(as_fragment_metadata(v, name=name) for v in values)


def plain(fragment: Fragment) -> Fragment:
    """The manifest fragment alone (what a manifest and a transaction record)."""
    if type(fragment) is Fragment:
        return fragment
    return Fragment(
        fragment.id,
        fragment.files,
        fragment.physical_rows,
        fragment.deletion_file,
        fragment.passthrough,
    )
