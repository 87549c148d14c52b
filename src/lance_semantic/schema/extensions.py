"""Extension semantic types (layer L2; spec "Extension Semantic Types", open decision 2).

A field is an extension semantic type when it carries ``ARROW:extension:name`` (and,
optionally, ``ARROW:extension:metadata``) over a core type, its storage type. A type that
already uses the Arrow slot itself (json, Blob v2, ``lance.bfloat16`` elements) records an
extension layered on it under the Lance-owned keys ``lance-schema:extension-name`` /
``lance-schema:extension-metadata`` (open decision 2, as the spec recommends); a read maps
them to the Arrow keys when the output field has no Arrow extension of its own
(:func:`lance_semantic.read.output.with_layered_extension`).

This module names both slots, compares them for appends to flagged tables, and guards the
reserved ``lance.`` prefix. An extension is its name *and* its serialized metadata: the
metadata carries the extension's parameters (a CRS, a tensor shape), so the same name with
other metadata is another type.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import pyarrow as pa

from ..errors import ReservedExtensionNameError, SchemaMismatchError
from ..types.metadata_keys import (
    BFLOAT16_EXTENSION,
    BLOB_V2_EXTENSION,
    EXTENSION_METADATA_KEY,
    EXTENSION_NAME_KEY,
    LANCE_JSON_EXTENSION,
    LAYERED_METADATA_KEY,
    LAYERED_NAME_KEY,
)
from .arrow import _extension_metadata
from .field import Field

__all__ = [
    "EXTENSION_NAME_KEY",
    "EXTENSION_METADATA_KEY",
    "LAYERED_NAME_KEY",
    "LAYERED_METADATA_KEY",
    "KNOWN_LANCE_EXTENSIONS",
    "Extension",
    "arrow_extension",
    "layered_extension",
    "input_arrow_extension",
    "input_layered_extension",
    "is_reserved_name",
    "check_reserved_names",
    "extension_names",
    "check_append_extensions",
]


#: extension names Lance defines: the core ones of the spec, and the value-preserving Python
#: types pylance 14 registers in ``lance.arrow``
KNOWN_LANCE_EXTENSIONS = frozenset(
    {
        LANCE_JSON_EXTENSION,
        BLOB_V2_EXTENSION,
        BFLOAT16_EXTENSION,
        "lance.arrow.image_uri",
        "lance.arrow.encoded_image",
        "lance.arrow.fixed_shape_image_tensor",
    }
)
_RESERVED_PREFIX = "lance."


@dataclass(frozen=True, slots=True)
class Extension:
    """An extension name with its serialized metadata (absent metadata is ``b""``)."""

    name: str
    metadata: bytes = b""

    def __str__(self) -> str:
        return f"{self.name} (metadata {self.metadata!r})"


def _decode(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")


def _from_metadata(md: dict[str, bytes], name_key: str, meta_key: str) -> Extension | None:
    name = md.get(name_key)
    if name is None:
        return None
    return Extension(_decode(name), md.get(meta_key, b""))


def arrow_extension(field: Field) -> Extension | None:
    """The Arrow-slot extension a table field records (``ARROW:extension:*``)."""
    md = dict(field.metadata)
    if field.extension_name and EXTENSION_NAME_KEY not in md:
        md[EXTENSION_NAME_KEY] = field.extension_name.encode()
    return _from_metadata(md, EXTENSION_NAME_KEY, EXTENSION_METADATA_KEY)


def layered_extension(field: Field) -> Extension | None:
    """The extension a table field records under ``lance-schema:extension-*``."""
    return _from_metadata(dict(field.metadata), LAYERED_NAME_KEY, LAYERED_METADATA_KEY)


def _input_metadata(af: pa.Field) -> dict[str, bytes]:
    return {_decode(k): v for k, v in (af.metadata or {}).items()}


def input_arrow_extension(af: pa.Field) -> Extension | None:
    """The Arrow-slot extension of an input field: its extension type, else its metadata."""
    if isinstance(af.type, pa.BaseExtensionType):
        return Extension(af.type.extension_name, _extension_metadata(af.type))
    return _from_metadata(_input_metadata(af), EXTENSION_NAME_KEY, EXTENSION_METADATA_KEY)


def input_layered_extension(af: pa.Field) -> Extension | None:
    """The extension an input field layers under ``lance-schema:extension-*``."""
    return _from_metadata(_input_metadata(af), LAYERED_NAME_KEY, LAYERED_METADATA_KEY)


def is_reserved_name(name: str) -> bool:
    """Whether ``name`` uses Lance's reserved prefix without being an extension Lance defines.

    Examples
    --------
    >>> is_reserved_name("lance.foo"), is_reserved_name("lance.json"), is_reserved_name("x.y")
    (True, False, False)
    """
    return name.startswith(_RESERVED_PREFIX) and name not in KNOWN_LANCE_EXTENSIONS


def extension_names(field: Field) -> set[str]:
    """Every extension name ``field`` records, in either slot."""
    return {e.name for e in (arrow_extension(field), layered_extension(field)) if e is not None}


def check_reserved_names(fields: Iterable[Field], *, allowed: Iterable[str] = ()) -> None:
    """Refuse new fields (and their descendants) that introduce an unknown ``lance.`` name.

    ``allowed`` holds names a table already records where the fields replace it (an
    overwrite, a type change), which stay usable.

    Raises
    ------
    ReservedExtensionNameError
        Naming the first offending field path (pre-order) and the extension name.
    """
    keep = frozenset(allowed)
    for top in fields:
        for f in top.walk():
            for name in sorted(extension_names(f)):
                if is_reserved_name(name) and name not in keep:
                    raise ReservedExtensionNameError(f.path, name)


def check_append_extensions(
    table_field: Field, input_field: pa.Field, path: str, *, arrow_slot: bool = True
) -> None:
    """The extension rule of appends, merges and updates on a flagged table.

    Per slot, the input may carry the table field's extension (name and metadata) or none;
    anything else is another semantic type. An input whose Arrow slot holds the table's
    layered extension while the table's Arrow slot is empty is a read's output (open
    decision 2 maps the layered keys there) and counts as the layered one. ``arrow_slot``
    is False for types that own the Arrow slot (json): only the layered slot is compared.

    Raises
    ------
    ReservedExtensionNameError
        The input introduces an unknown ``lance.`` name.
    SchemaMismatchError
        Another extension (or one on a field that has none).
    """
    table_arrow = arrow_extension(table_field) if arrow_slot else None
    table_layered = layered_extension(table_field)
    in_arrow = input_arrow_extension(input_field) if arrow_slot else None
    in_layered = input_layered_extension(input_field)
    if (
        in_arrow is not None
        and table_arrow is None
        and in_layered is None
        and in_arrow == table_layered
    ):
        in_arrow, in_layered = None, in_arrow
    slots = (
        (EXTENSION_NAME_KEY, table_arrow, in_arrow),
        (LAYERED_NAME_KEY, table_layered, in_layered),
    )
    for key, table_ext, given in slots:
        if given is None or given == table_ext:
            continue
        if is_reserved_name(given.name) and (table_ext is None or table_ext.name != given.name):
            raise ReservedExtensionNameError(path, given.name)
        table_text = f"{table_field.logical_type} " + (
            f"with {key} {table_ext}" if table_ext is not None else f"without {key}"
        )
        raise SchemaMismatchError(
            path, table_text, f"{key} {given}", "another extension semantic type"
        )
