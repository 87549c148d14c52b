"""The INVERTED index files we write hold what pylance 14's builder writes for the same
documents: the token map (byte for byte), the documents, every posting block (block scores,
BitPacker4x widths, varint tails), the impact entries of each block and of each 32 blocks,
the position streams and the schema metadata.

The documents are ASCII words built so that the tokens are known without an analyzer
(pylance's index built with ``stem=False, remove_stop_words=False``: lower case, split on
non-alphanumerics), and shaped to reach the encodings' edges: posting lists of exactly 128
and 129 documents, more than 32 blocks, frequencies that need wide bit widths, very long
documents, empty and null rows (not documents)."""

from __future__ import annotations

import re
from pathlib import Path

import lance
import numpy as np
import pyarrow as pa
import pytest
from lance.file import LanceFileReader

from lance_semantic.fts.inverted_write import DEFAULT_PARAMS, write_inverted
from lance_semantic.storage import open_store

FILES = ("part_0_tokens.lance", "part_0_docs.lance", "part_0_invert.lance", "metadata.lance")


def _zipf(rng: np.random.Generator, n: int, vocab: int) -> list[str]:
    words = [f"w{i}" for i in range(vocab)]
    p = np.arange(1, vocab + 1, dtype=float) ** -1.0
    p /= p.sum()
    out = []
    for _ in range(n):
        if rng.random() < 0.02:
            out.append("")
        else:
            out.append(" ".join(rng.choice(words, size=int(rng.integers(1, 40)), p=p)))
    return out


def _corpora() -> dict[str, list[str | None]]:
    rng = np.random.default_rng(31)
    exact = ["alpha beta"] * 128 + ["gamma"] * 129 + ["delta"] * 256
    repeated = [" ".join(["hot"] * int(k) + ["cold"]) for k in rng.integers(1, 3000, 300)]
    mixed: list[str | None] = ["Hello, World!", None, "", "x1 y2 z3 -- x1", "UPPER lower MiXeD"]
    return {
        "zipf": list(_zipf(rng, 9000, 80)),
        "more than 32 blocks": list(_zipf(rng, 30000, 6)),
        "exact block sizes": list(exact),
        "wide frequencies": list(repeated),
        "nulls and punctuation": mixed * 40,
    }


CORPORA = _corpora()


def _tokens(docs: list[str | None]) -> tuple[pa.ListArray, pa.ListArray]:
    words = [re.findall(r"[a-z0-9]+", (d or "").lower()) for d in docs]
    tokens = pa.array(words, pa.list_(pa.string()))
    positions = pa.array([list(range(len(w))) for w in words], pa.list_(pa.uint32()))
    return tokens, positions


def _read(folder: Path, name: str) -> tuple[pa.Table, dict[bytes, bytes]]:
    reader = LanceFileReader(str(folder / name))
    return reader.read_all().to_table(), reader.metadata().schema.metadata or {}


@pytest.mark.parametrize("with_position", [False, True], ids=["no positions", "positions"])
@pytest.mark.parametrize("corpus", list(CORPORA))
def test_our_index_files_hold_what_pylances_builder_writes(
    tmp_path: Path, corpus: str, with_position: bool
) -> None:
    docs = CORPORA[corpus]
    uri = str(tmp_path / "t.lance")
    ds = lance.write_dataset(pa.table({"text": pa.array(docs, pa.string())}), uri)
    options = {"stem": False, "remove_stop_words": False, "with_position": with_position}
    ds.create_scalar_index("text", "INVERTED", **options)
    (theirs,) = (tmp_path / "t.lance" / "_indices").iterdir()

    tokens, positions = _tokens(docs)
    store = open_store(str(tmp_path / "ours"))
    params = {**DEFAULT_PARAMS, **options}
    written = write_inverted(
        store, "idx", np.arange(len(docs), dtype=np.uint64), tokens, params, positions
    )
    ours = tmp_path / "ours" / "idx"
    assert [f.path for f in written] == [
        "part_0_invert.lance",
        "part_0_tokens.lance",
        "part_0_docs.lance",
        "metadata.lance",
    ]
    for f in written:
        assert f.size_bytes == (ours / f.path).stat().st_size
    for name in FILES:
        want, want_meta = _read(theirs, name)
        got, got_meta = _read(ours, name)
        assert got.schema == want.schema, name
        assert got_meta == want_meta, name
        for column in want.column_names:
            assert got.column(column).equals(want.column(column)), (name, column)


def test_a_missing_position_list_is_refused(tmp_path: Path) -> None:
    tokens, _ = _tokens(["a b"])
    store = open_store(str(tmp_path / "ours"))
    with pytest.raises(ValueError, match="with_position needs the tokens' positions"):
        write_inverted(
            store,
            "idx",
            np.zeros(1, np.uint64),
            tokens,
            {**DEFAULT_PARAMS, "with_position": True},
        )
