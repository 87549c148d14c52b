"""pylance INVERTED indices for the full-text tests: build one, read its token set and
per-document token counts, and the measurements behind ``lance_semantic.fts``'s tables.

``python tests/fts_support.py`` re-measures the tables over every code point and the stop
word candidates and rewrites ``src/lance_semantic/fts/_unicode_data.py`` (the stop words
in ``_stop_words.py`` came from :func:`measure_stop_words` over the NLTK, Snowball and
stopwords-iso lists; it needs those candidate words, see its docstring).
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import lance
import pyarrow as pa
from lance.file import LanceFileReader

from lance_semantic.fts import TokenMap

#: code points swept: all but the surrogates, the unassigned planes 4-13 and the private
#: use planes 15-16 (ASCII is covered by the corpora)
SWEPT = [c for c in [*range(0x80, 0x40000), *range(0xE0000, 0xF0000)] if not 0xD800 <= c < 0xE000]


def build_index(root: Path, docs: Sequence[str | None], **params: Any) -> Path:
    """The ``_indices/<uuid>`` directory of an INVERTED index pylance builds over ``docs``
    (one ``text`` column) with ``params``."""
    uri = root / f"t{len(list(root.glob('t*.lance')))}.lance"
    shutil.rmtree(uri, ignore_errors=True)
    ds = lance.write_dataset(pa.table({"text": pa.array(docs, pa.string())}), str(uri))
    ds.create_scalar_index("text", "INVERTED", **params)
    (files,) = (uri / "_indices").iterdir()
    return files


def _partitions(files: Path) -> list[int]:
    meta = LanceFileReader(str(files / "metadata.lance")).metadata().schema.metadata
    return list(json.loads(meta[b"partitions"]))


def index_tokens(files: Path) -> set[str]:
    """Every token of the index (over its partitions), through :class:`TokenMap`."""
    out: set[str] = set()
    for p in _partitions(files):
        path = files / f"part_{p}_tokens.lance"
        if path.exists():  # a partition without tokens has no token file
            table = LanceFileReader(str(path)).read_all().to_table()
            out.update(TokenMap.from_table(table, str(path)).keys())
    return out


def index_token_counts(files: Path) -> dict[int, int]:
    """Row id -> ``_num_tokens`` of every document of the index."""
    out: dict[int, int] = {}
    for p in _partitions(files):
        path = files / f"part_{p}_docs.lance"
        if path.exists():
            t = LanceFileReader(str(path)).read_all().to_table()
            out.update(zip(t["_rowid"].to_pylist(), t["_num_tokens"].to_pylist(), strict=True))
    return out


def chunked(words: Iterable[str], per_doc: int = 1000) -> list[str]:
    """``words`` as documents of ``per_doc`` space-separated words."""
    ws = list(words)
    return [" ".join(ws[i : i + per_doc]) for i in range(0, len(ws), per_doc)]


# -- the measurements ---------------------------------------------------------------------

RAW = dict(stem=False, remove_stop_words=False, max_token_length=None)


def measure_alphanumeric(root: Path) -> set[int]:
    """The swept code points the ``simple`` tokenizer keeps inside a token: ``q<hex>x<c>z``
    stays one token exactly when ``c`` is alphanumeric."""
    docs = chunked(f"q{c:x}x{chr(c)}z" for c in SWEPT)
    tokens = index_tokens(build_index(root, docs, lower_case=False, ascii_folding=False, **RAW))
    return {int(t[1:].split("x")[0], 16) for t in tokens if t[0] == "q" and t[-1] == "z"}


def measure_per_char(root: Path, lower_case: bool, ascii_folding: bool) -> dict[int, str]:
    """Each swept code point's result under one filter: ``q<hex>.<c>`` through the
    ``whitespace`` tokenizer gives ``q<hex>.<filtered c>``."""
    docs = chunked(f"q{c:x}.{chr(c)}" for c in SWEPT)
    files = build_index(
        root,
        docs,
        base_tokenizer="whitespace",
        lower_case=lower_case,
        ascii_folding=ascii_folding,
        **RAW,
    )
    out = {}
    for t in index_tokens(files):
        head, _, rest = t.partition(".")
        out[int(head[1:], 16)] = rest
    return out


def measure_stop_words(root: Path, candidates: Iterable[str], language: str) -> list[str]:
    """The candidate words pylance's stop-word filter for ``language`` removes (the
    ``whitespace`` tokenizer, no other filter). The shipped lists were measured over the
    words of the NLTK lists and stopwords-iso (the ``stop-words`` crate's data, which
    pylance uses), the Python packages ``stopwordsiso`` and ``stop-words``."""
    words = sorted({w for w in candidates if w and " " not in w and len(w.encode()) < 200})
    params = dict(
        base_tokenizer="whitespace",
        lower_case=False,
        ascii_folding=False,
        stem=False,
        max_token_length=None,
    )
    docs = chunked(words, 500)
    kept = index_tokens(
        build_index(root, docs, remove_stop_words=True, language=language, **params)
    )
    return sorted(set(words) - kept)


def _ranges(points: Iterable[int]) -> list[tuple[int, int]]:
    out: list[list[int]] = []
    for c in sorted(points):
        if out and out[-1][1] == c - 1:
            out[-1][1] = c
        else:
            out.append([c, c])
    return [(a, b) for a, b in out]


def write_unicode_tables(target: Path) -> None:
    """Measure and write ``_unicode_data.py`` (the alphanumeric ranges, the exceptions
    to Python's lower case and to the NFKD folding rule)."""
    from lance_semantic.fts import tokenize as tk

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        alnum = measure_alphanumeric(root)
        lower = measure_per_char(root, lower_case=True, ascii_folding=False)
        fold = measure_per_char(root, lower_case=False, ascii_folding=True)
    # ASCII alphanumerics, and the unswept planes as Python sees them
    alnum |= {ord(c) for c in "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"}
    lower_exc = {c: v for c, v in sorted(lower.items()) if c != 0x3A3 and v != chr(c).lower()}
    saved = dict(tk.FOLD_EXCEPTIONS)
    tk.FOLD_EXCEPTIONS.clear()
    try:
        fold_exc = {c: v for c, v in sorted(fold.items()) if v != tk._fold_char(c)}
    finally:
        tk.FOLD_EXCEPTIONS.update(saved)
    lines = [
        '"""Unicode facts of pylance 14\'s analyzer, measured (layer L3): generated by',
        "``python tests/fts_support.py`` from INVERTED indices pylance builds over every code",
        "point (but the unassigned planes 4-13 and the private use planes), checked by",
        "``tests/interop/test_fts_tokens_like_pylance.py``. Do not edit by hand.",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        '__all__ = ["ALNUM_RANGES", "LOWER_EXCEPTIONS", "FOLD_EXCEPTIONS"]',
        "",
        "#: the code points pylance's ``simple`` tokenizer keeps in a token (Rust's",
        "#: ``char::is_alphanumeric``), as inclusive ``(first, last)`` ranges",
        "ALNUM_RANGES: tuple[tuple[int, int], ...] = (",
    ]
    line = "   "
    for a, b in _ranges(alnum):
        item = f" (0x{a:X}, 0x{b:X}),"
        if len(line) + len(item) > 99:
            lines.append(line)
            line = "   "
        line += item
    lines += [line, ")", ""]
    lines += [
        "#: code points whose lower case (Rust's ``char::to_lowercase``) is not Python's",
        "#: ``str.lower`` (newer Unicode in Rust); ``Σ`` is always ``σ`` (no final-sigma rule)",
        "LOWER_EXCEPTIONS: dict[int, str] = {",
        *(f"    0x{c:X}: {v!a}," for c, v in lower_exc.items()),
        "}",
        "",
        "#: code points whose ASCII folding is not the NFKD rule's under Python's Unicode tables",
        "FOLD_EXCEPTIONS: dict[int, str] = {",
        *(f"    0x{c:X}: {v!a}," for c, v in fold_exc.items()),
        "}",
        "",
    ]
    target.write_text("\n".join(lines))


if __name__ == "__main__":
    src = Path(__file__).resolve().parents[1] / "src" / "lance_semantic" / "fts"
    write_unicode_tables(src / "_unicode_data.py")
    print("wrote", src / "_unicode_data.py", file=sys.stderr)
