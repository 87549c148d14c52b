"""``lance-semantic`` command line: ``inspect``, ``check``, ``upgrade``,
``set-output-encoding`` and ``demo`` (layer L6).

Bad input gives one line on stderr and a non-zero exit status, never a traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Sequence

import pyarrow as pa

from ..dataset.check import check
from ..dataset.dataset import Dataset, dataset
from ..dataset.writing import write_dataset
from ..errors import LanceSemanticError
from ..manifest import flags
from ..schema.field import Field

__all__ = ["main", "format_inspect"]


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


def format_inspect(ds: Dataset) -> str:
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
    total_files = sum(len(f.files) for f in m.fragments)
    lines.append(
        f"fragments:            {len(m.fragments)} ({total_files} data files, "
        f"{ds.count_rows()} rows)"
    )
    for frag in m.fragments:
        dels = frag.deletion_file.num_deleted_rows if frag.deletion_file else 0
        lines.append(
            f"  fragment {frag.id}: {frag.physical_rows} rows"
            + (f", {dels} deleted" if dels else "")
        )
        for df in frag.files:
            lines.append(
                f"    {df.path}  v{df.file_major_version}.{df.file_minor_version}  "
                f"{df.file_size_bytes} bytes  fields={list(df.fields)}"
            )
    return "\n".join(lines)


def _demo(directory: str | None) -> int:
    root = directory or tempfile.mkdtemp(prefix="lance-semantic-demo-")
    uri = os.path.join(root, "demo.lance")
    table = pa.table(
        {
            "id": pa.array([1, 2, 3], pa.int64()),
            "name": pa.array(["ada", "grace", "linus"], pa.string()),
            "tags": pa.array([["math"], ["navy", "cobol"], []], pa.list_(pa.string())),
            "point": pa.array([{"x": 1.0, "y": 2.0}, {"x": 3.0, "y": 4.0}, None]),
        }
    )
    # data storage 2.3: the table carries FLAG_SEMANTIC_TYPES (the Semantic Type Contract)
    ds = write_dataset(table, uri, mode="overwrite", data_storage_version="2.3")
    print(f"created {uri} (version {ds.version}, semantic types: {ds.semantic_types})")
    # layouts are not types: LargeUtf8 names, a large_list of views and a dictionary append
    more = pa.table(
        {
            "id": pa.array([4, 5], pa.int64()),
            "name": pa.array(["barbara", "edsger"], pa.large_string()),
            "tags": pa.array([["lisp"], []], pa.large_list(pa.string_view())),
        }
    )
    ds.insert(more)
    ds.insert(
        pa.table({"id": pa.array([6], pa.int64()), "name": pa.array(["ken"]).dictionary_encode()})
    )
    print("appended LargeUtf8, large_list<string_view> and dictionary data to the same columns\n")
    print(format_inspect(ds))
    print("\nread back (each column in the layout it was created with):")
    print(ds.schema)
    print("\nrows where id > 1, name as large_utf8 by request:")
    result = ds.to_table(
        columns=["id", "name", "point.x"],
        filter="id > 1",
        output_encodings={"name": "large_utf8"},
    )
    print(result.schema)
    print(result.to_pandas().to_string(index=False) if _has_pandas() else result)
    return 0


def _has_pandas() -> bool:
    try:
        import pandas  # noqa: F401
    except ImportError:
        return False
    return True


def _check_dir(uri: str) -> None:
    if "://" in uri and not uri.startswith("file://"):
        return  # an object store: opening it says whether the table exists
    if not os.path.isdir(uri.removeprefix("file://")):
        raise LanceSemanticError(f"no such directory: {uri}")


def _open(uri: str, pairs: Sequence[str], version: int | None = None) -> Dataset:
    _check_dir(uri)
    return dataset(uri, version=version, storage_options=_storage_options(pairs) or None)


def _storage_options(pairs: Sequence[str]) -> dict[str, str]:
    options = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise ValueError(f"--storage-option takes K=V, not {pair!r}")
        options[key] = value
    return options


def _check(uri: str, version: int | None, as_json: bool, pairs: Sequence[str]) -> int:
    report = check(uri, version=version, storage_options=_storage_options(pairs) or None)
    if as_json:
        print(report.to_json())
    elif report.ok:
        print(f"{report.uri} version {report.version}: ok")
    else:
        for problem in report.problems:
            print(problem)
    return 0 if report.ok else 1


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="lance-semantic", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p_inspect = sub.add_parser(
        "inspect", help="print a table's version, flags, schema and fragments"
    )
    p_inspect.add_argument("uri")
    p_inspect.add_argument(
        "--version", type=int, default=None, help="a version other than the latest"
    )
    p_check = sub.add_parser(
        "check", help="verify a table version (reads only); exit 1 with one line per problem"
    )
    p_check.add_argument("uri")
    p_check.add_argument("--version", type=int, default=None, help="default: the latest")
    p_check.add_argument("--json", action="store_true", help='print {"ok": ..., "problems": [...]}')
    p_up = sub.add_parser(
        "upgrade", help="upgrade a legacy table to semantic types (one metadata-only commit)"
    )
    p_up.add_argument("uri")
    p_enc = sub.add_parser(
        "set-output-encoding", help="record the layout reads of a field return (metadata only)"
    )
    p_enc.add_argument("uri")
    p_enc.add_argument("path", help="field path, e.g. name, s.child, l.item, m.key or m.value")
    p_enc.add_argument(
        "encoding", help="e.g. large_utf8, utf8_view, dictionary:int16:utf8; 'none' clears"
    )
    for p in (p_inspect, p_check, p_up, p_enc):
        p.add_argument(
            "--storage-option",
            action="append",
            default=[],
            metavar="K=V",
            help="a storage option (repeatable), as for lance_semantic.dataset, e.g. "
            "aws_endpoint=http://host:port",
        )
    p_demo = sub.add_parser("demo", help="build a small table and show it")
    p_demo.add_argument("dir", nargs="?", default=None)
    args = parser.parse_args(argv)
    try:
        if args.command == "inspect":
            print(format_inspect(_open(args.uri, args.storage_option, args.version)))
            return 0
        if args.command == "check":
            return _check(args.uri, args.version, args.json, args.storage_option)
        if args.command == "upgrade":
            ds = _open(args.uri, args.storage_option)
            if ds.semantic_types:
                print(
                    f"{args.uri} already uses semantic types (version {ds.version}); nothing to do"
                )
                return 0
            before = ds.version
            ds.upgrade_semantic_types()
            print(f"upgraded {args.uri}: version {before} -> {ds.version}, no data file rewritten")
            return 0
        if args.command == "set-output-encoding":
            ds = _open(args.uri, args.storage_option)
            encoding = None if args.encoding.lower() == "none" else args.encoding
            ds.set_output_encoding(args.path, encoding)
            print(
                f"{args.uri}: {args.path} now reads as {encoding or 'the type default'} "
                f"(version {ds.version})"
            )
            return 0
        return _demo(args.dir)
    except (LanceSemanticError, OSError, TypeError, ValueError) as e:
        print(f"lance-semantic: error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
