"""``lance-semantic inspect``: a table version as text (layer L6)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ..dataset import Dataset
from ..errors import LanceSemanticError
from ..manifest import Fragment, flags
from ..schema import Field

__all__ = ["format_inspect", "FRAGMENTS_SHOWN"]

#: fragments listed one by one without ``--fragments``; the rest are summed up in one line
FRAGMENTS_SHOWN = 20


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


def _id_ranges(ids: Sequence[int]) -> str:
    """``0-3, 7, 9-10`` for the sorted ids 0, 1, 2, 3, 7, 9, 10."""
    runs: list[list[int]] = []
    for fid in ids:
        if runs and fid == runs[-1][1] + 1:
            runs[-1][1] = fid
        else:
            runs.append([fid, fid])
    return ", ".join(f"{a}" if a == b else f"{a}-{b}" for a, b in runs)


def _coverage(covered: Iterable[int], fragments: Sequence[Fragment]) -> str:
    """Which of the table's fragments and live rows an index covers, and which not."""
    ids = set(covered)
    live = {f.id: f.physical_rows - f.num_deleted_rows for f in fragments}
    inside = sorted(fid for fid in live if fid in ids)
    outside = sorted(fid for fid in live if fid not in ids)
    rows = sum(live[fid] for fid in inside)
    text = f"covers {len(inside)} of {len(live)} fragments ({rows} of {sum(live.values())} rows)"
    return text + (f"; not covered: {_id_ranges(outside)}" if outside else "")


def _index_lines(ds: Dataset) -> list[str]:
    indices = ds.list_indices()
    if not indices:
        return ["indices:              none"]
    lines = [f"indices:              {len(indices)}"]
    for ix in indices:
        on = ", ".join(ix["fields"]) or "no field"
        kind = f"{ix['type']} " if ix["type"] else ""
        lines.append(
            f"  {ix['name'] or '(unnamed)'}: {kind}index on {on} (built at version "
            f"{ix['version']}), {_coverage(ix['fragment_ids'], ds.manifest.fragments)}"
        )
    return lines


def _tag_lines(ds: Dataset) -> list[str]:
    """The tags (``_refs/tags/*.json``), if any; a tag file that does not decode is named
    instead of failing the whole inspect."""
    try:
        tags = ds.tags.list()
    except LanceSemanticError as e:
        return [f"tags:                 unreadable ({e})"]
    if not tags:
        return []
    lines = [f"tags:                 {len(tags)}"]
    for name, tag in sorted(tags.items()):
        lines.append(f"  {name} -> version {tag['version']}")
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
