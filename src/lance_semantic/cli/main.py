"""``lance-semantic`` command line: ``inspect``, ``check``, ``upgrade``,
``set-output-encoding``, ``compact``, ``warm-up`` and ``demo`` (layer L6).

Bad input gives one line on stderr and a non-zero exit status, never a traceback: 1 for an
error (or, for ``check``, a table with problems; for ``upgrade``, a refused or declined
confirmation), 2 for a usage error, 130 when interrupted.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Sequence
from importlib import metadata

import lance_semantic

from ..dataset.dataset import Dataset, dataset
from ..dataset.maintenance import check, warm_up
from ..errors import LanceSemanticError
from .demo import run_demo
from .inspect import FRAGMENTS_SHOWN, format_inspect

__all__ = ["main", "format_inspect"]

DESCRIPTION = (
    "Inspect, check and maintain Lance tables, and upgrade them to the Semantic Type Contract."
)
EPILOG = (
    "exit status: 0 ok; 1 an error (one line on stderr), a table with problems (check) or an "
    "upgrade not confirmed; 2 a usage error. Run 'lance-semantic COMMAND --help' for a "
    "command's arguments."
)
_ERRNO = re.compile(r"\[Errno \d+\]\s*")


class Refused(LanceSemanticError):
    """The user did not confirm (or could not be asked)."""


#: a location with a scheme is a URI (``file:`` ones included), as in pylance
_URI = re.compile(r"\s*[A-Za-z][A-Za-z0-9+.\-]*:")


def _check_dir(uri: str) -> None:
    if _URI.match(uri):
        return  # a URI: opening it says whether the table exists (or what is wrong)
    if not os.path.isdir(uri):
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


def _show_progress(flag: bool | None) -> bool:
    """--progress / --no-progress, else a bar only when stderr is a terminal."""
    return flag if flag is not None else sys.stderr.isatty()


# ---- commands ---------------------------------------------------------------------------------
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


def _confirm_upgrade(ds: Dataset, yes: bool) -> None:
    """State what the upgrade changes for pylance and ask; raise :class:`Refused` unless the
    answer is yes (or ``yes`` was given). Nothing is asked when stdin is not a terminal."""
    if yes:
        return
    warning = (
        f"Upgrading {ds.uri} (version {ds.version}) sets the semantic-types feature flag: "
        f"stock pylance 14 will no longer open the table's new versions (version "
        f"{ds.version + 1} on) nor write to it; version {ds.version} and earlier stay "
        "readable by version number. No data file is rewritten."
    )
    if not sys.stdin or not sys.stdin.isatty():
        raise Refused(
            f"not upgraded: after an upgrade stock pylance 14 no longer opens the new versions "
            f"of {ds.uri}, and there is no terminal to confirm on; pass --yes to upgrade "
            "without asking"
        )
    print(warning, file=sys.stderr)
    print("Upgrade? [y/N] ", end="", file=sys.stderr, flush=True)
    answer = sys.stdin.readline().strip().lower()
    if answer not in ("y", "yes"):
        raise Refused(f"not upgraded: {ds.uri} is unchanged (version {ds.version})")


def _upgrade(uri: str, pairs: Sequence[str], yes: bool) -> int:
    ds = _open(uri, pairs)
    if ds.semantic_types:
        print(f"{uri} already uses semantic types (version {ds.version}); nothing to do")
        return 0
    _confirm_upgrade(ds, yes)
    before = ds.version
    ds.upgrade_semantic_types()
    print(f"upgraded {uri}: version {before} -> {ds.version}, no data file rewritten")
    return 0


def _set_output_encoding(uri: str, path: str, value: str, pairs: Sequence[str]) -> int:
    ds = _open(uri, pairs)
    encoding = None if value.lower() == "none" else value
    ds.set_output_encoding(path, encoding)
    print(f"{uri}: {path} now reads as {encoding or 'the type default'} (version {ds.version})")
    return 0


def _compact(args: argparse.Namespace) -> int:
    ds = _open(args.uri, args.storage_option)
    before = ds.version
    metrics = ds.optimize.compact_files(
        target_rows_per_fragment=args.target_rows_per_fragment,
        progress=_show_progress(args.progress),
    )
    if ds.version == before:
        print(f"{args.uri}: nothing to compact (version {before})")
    else:
        print(
            f"compacted {args.uri}: version {before} -> {ds.version}, "
            f"{metrics.fragments_removed} fragments -> {metrics.fragments_added}"
        )
    return 0


def _warm_up() -> int:
    took = warm_up()
    json_kernels = ("encode_rows", "render_rows", "check_rows")
    print(
        "JSON codec ready (compiled or loaded from the cache): "
        + ", ".join(f"{k} {s:.1f} s" for k, s in took.items() if k in json_kernels)
    )
    print(
        "vector index kernels ready: "
        + ", ".join(f"{k} {s:.1f} s" for k, s in took.items() if k not in json_kernels)
    )
    return 0


# ---- the parser -------------------------------------------------------------------------------
def _version() -> str:
    try:
        pylance = metadata.version("pylance")
    except metadata.PackageNotFoundError:  # pragma: no cover - a dependency
        pylance = "?"
    return f"lance-semantic {lance_semantic.__version__} (pylance {pylance})"


def _add_uri(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "uri", metavar="URI", help="the table: a directory, file://..., or s3://bucket/path"
    )


def _add_storage_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--storage-option",
        action="append",
        default=[],
        metavar="K=V",
        help="a storage option (repeatable), as for lance_semantic.dataset, e.g. "
        "aws_endpoint=http://host:port",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="lance-semantic", description=DESCRIPTION, epilog=EPILOG)
    parser.add_argument(
        "--version", action="version", version=_version(), help="print the version and exit"
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser(
        "inspect",
        help="print a table's version, flags, schema, config, indices, tags and fragments",
        epilog=f"Beyond {FRAGMENTS_SHOWN} fragments the rest are summed up in one line.",
    )
    _add_uri(p)
    p.add_argument(
        "--version", type=int, default=None, metavar="N", help="a version other than the latest"
    )
    p.add_argument("--fragments", action="store_true", help="list every fragment and data file")
    _add_storage_options(p)

    p = sub.add_parser(
        "check", help="verify a table version (reads only); exit 1 with one line per problem"
    )
    _add_uri(p)
    p.add_argument("--version", type=int, default=None, metavar="N", help="default: the latest")
    p.add_argument("--json", action="store_true", help='print {"ok": ..., "problems": [...]}')
    _add_storage_options(p)

    p = sub.add_parser(
        "upgrade",
        help="upgrade a legacy table to semantic types (one metadata-only commit; asks first)",
        description="Upgrade a legacy table to the Semantic Type Contract: one metadata-only "
        "commit that sets the semantic-types feature flag. Stock pylance 14 will no longer "
        "open the table's new versions, so this asks for confirmation first.",
    )
    _add_uri(p)
    p.add_argument(
        "--yes", "-y", action="store_true", help="upgrade without asking for confirmation"
    )
    _add_storage_options(p)

    p = sub.add_parser(
        "set-output-encoding", help="record the layout reads of a field return (metadata only)"
    )
    _add_uri(p)
    p.add_argument("path", help="field path, e.g. name, s.child, l.item, m.key or m.value")
    p.add_argument(
        "encoding", help="e.g. large_utf8, utf8_view, dictionary:int16:utf8; 'none' clears"
    )
    _add_storage_options(p)

    p = sub.add_parser(
        "compact", help="merge small fragments and materialize deletions (rewrites data files)"
    )
    _add_uri(p)
    p.add_argument(
        "--target-rows-per-fragment",
        type=int,
        default=None,
        metavar="N",
        help="rows per new fragment (default: the table's config, else 1048576)",
    )
    p.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="show a progress bar (default: when stderr is a terminal)",
    )
    _add_storage_options(p)

    sub.add_parser(
        "warm-up",
        help="compile the JSON codec into the user-wide cache now (else done on first need)",
    )

    p = sub.add_parser(
        "demo", help="build a small flagged table and show it (never overwrites a table)"
    )
    p.add_argument(
        "dir",
        nargs="?",
        default=None,
        metavar="DIR",
        help="where to create demo.lance (default: a new temporary directory)",
    )
    return parser


def _message(e: BaseException) -> str:
    """One plain line: an OSError as its reason and path, never ``[Errno N]``."""
    if isinstance(e, OSError) and not isinstance(e, LanceSemanticError) and e.strerror:
        paths = [p for p in (e.filename, getattr(e, "filename2", None)) if p is not None]
        text = e.strerror + (f": {' -> '.join(map(str, paths))}" if paths else "")
    else:
        text = str(e) or type(e).__name__
    return " ".join(_ERRNO.sub("", text).split())


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        match args.command:
            case "inspect":
                ds = _open(args.uri, args.storage_option, args.version)
                print(format_inspect(ds, all_fragments=args.fragments))
                return 0
            case "check":
                return _check(args.uri, args.version, args.json, args.storage_option)
            case "upgrade":
                return _upgrade(args.uri, args.storage_option, args.yes)
            case "set-output-encoding":
                return _set_output_encoding(args.uri, args.path, args.encoding, args.storage_option)
            case "compact":
                return _compact(args)
            case "warm-up":
                return _warm_up()
            case _:
                return run_demo(args.dir)
    except BrokenPipeError:  # the reader of stdout went away (| head): stop quietly
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    except (LanceSemanticError, OSError, TypeError, ValueError) as e:
        print(f"lance-semantic: error: {_message(e)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("lance-semantic: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
