"""``lance-semantic inspect``: a table version as text (layer L6)."""

from __future__ import annotations

import json
from collections.abc import Iterable

from ..dataset.dataset import Dataset
from ..manifest import flags
from ..manifest.indices import describe_indices
from ..manifest.model import Fragment
from ..schema.field import Field

__all__ = ["format_inspect", "FRAGMENTS_SHOWN"]

#: fragments listed one by one without ``--fragments``; the rest are summed up in one line
FRAGMENTS_SHOWN = 20
_TAGS_DIR = "_refs/tags"


def _field_lines(f: Field, depth: int) -> list[str]:
    extra = []
    if not f.nullable:
        extra.append("not null")
    if f.extension_name:
        extra.append(f"extension={f.extension_name}")
    if f.output_encoding:
        extra.append(f"output-encoding={f.output_encoding}")
    tail = f"  ({', '.join(extra)})" if extra else ""
    lines = [f"{'  ' * depth}[{f.id}] {f.name}: {f.logical_type}{tail}"]
    for c in f.children:
        lines.extend(_field_lines(c, depth + 1))
    return lines


def _fragment_lines(frag: Fragment) -> list[str]:
    dels = frag.num_deleted_rows
    head = f"  fragment {frag.id}: {frag.physical_rows} rows"
    lines = [head + (f", {dels} deleted" if dels else "")]
    for df in frag.files:
        lines.append(
            f"    {df.path}  v{df.file_major_version}.{df.file_minor_version}  "
            f"{df.file_size_bytes} bytes  fields={list(df.fields)}"
        )
    return lines


def _rest_line(rest: list[Fragment]) -> str:
    rows = sum(f.physical_rows for f in rest)
    dels = sum(f.num_deleted_rows for f in rest)
    files = sum(len(f.files) for f in rest)
    return (
        f"  ... {len(rest)} more fragments (ids {rest[0].id}-{rest[-1].id}: {rows} rows"
        + (f", {dels} deleted" if dels else "")
        + f", {files} data files); --fragments lists every one"
    )


def _index_lines(ds: Dataset) -> list[str]:
    indices = describe_indices(ds.manifest.index_section)
    if not indices:
        return ["indices:              none"]
    paths = {f.id: f.path for f in ds.semantic_schema}
    lines = [f"indices:              {len(indices)}"]
    for ix in indices:
        on = ", ".join(paths.get(i, f"field {i} (not in the schema)") for i in ix.field_ids)
        kind = f"{ix.kind} " if ix.kind else ""
        lines.append(
            f"  {ix.name or '(unnamed)'}: {kind}index on {on or 'no field'} "
            f"(built at version {ix.dataset_version})"
        )
    return lines


def read_tags(ds: Dataset) -> dict[str, int | None]:
    """Tag name -> version, from the table's ``_refs/tags/<name>.json`` files (none: {}). A
    tag file that does not decode maps to None."""
    store = ds._store
    try:
        names = store.list(_TAGS_DIR)
    except OSError:
        return {}
    tags: dict[str, int | None] = {}
    for name in names:
        if not name.endswith(".json"):
            continue
        try:
            version = json.loads(store.get(f"{_TAGS_DIR}/{name}"))["version"]
            tags[name.removesuffix(".json")] = version if isinstance(version, int) else None
        except (OSError, ValueError, KeyError, TypeError):
            tags[name.removesuffix(".json")] = None
    return tags


def _tag_lines(ds: Dataset) -> list[str]:
    tags = read_tags(ds)
    if not tags:
        return []
    lines = [f"tags:                 {len(tags)}"]
    for name, version in sorted(tags.items()):
        lines.append(f"  {name} -> " + (f"version {version}" if version is not None else "?"))
    return lines


def _config_lines(config: Iterable[tuple[str, str]]) -> list[str]:
    items = sorted(config)
    if not items:
        return ["config:               none"]
    return ["config:"] + [f"  {k} = {v}" for k, v in items]


def format_inspect(ds: Dataset, *, all_fragments: bool = False) -> str:
    """Version, data storage version, writer, feature flags, schema tree, config, indices,
    tags and fragments of ``ds``; beyond :data:`FRAGMENTS_SHOWN` fragments the rest are summed
    up in one line unless ``all_fragments``."""
    m = ds.manifest
    names = flags.flag_names(m.reader_feature_flags | m.writer_feature_flags)
    lines = [
        f"uri:                  {ds.uri}",
        f"version:              {m.version}",
        f"data storage version: {m.data_storage_version}",
        f"writer:               {m.writer_version.library} {m.writer_version.version}",
        f"feature flags:        reader={m.reader_feature_flags} writer={m.writer_feature_flags}"
        + (f" ({', '.join(names)})" if names else ""),
        f"semantic types:       {'yes' if ds.semantic_types else 'no (legacy table)'}",
        "schema:",
    ]
    for top in m.schema.fields:
        lines.extend(_field_lines(top, 1))
    lines.extend(_config_lines(m.config.items()))
    lines.extend(_index_lines(ds))
    lines.extend(_tag_lines(ds))
    total_files = sum(len(f.files) for f in m.fragments)
    lines.append(
        f"fragments:            {len(m.fragments)} ({total_files} data files, "
        f"{ds.count_rows()} rows)"
    )
    shown = m.fragments if all_fragments else m.fragments[:FRAGMENTS_SHOWN]
    for frag in shown:
        lines.extend(_fragment_lines(frag))
    rest = list(m.fragments[len(shown) :])
    if rest:
        lines.append(_rest_line(rest))
    return "\n".join(lines)
