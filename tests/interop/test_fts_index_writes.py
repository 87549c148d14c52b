"""``create_scalar_index(column, "INVERTED")`` writes pylance 14's full-text index: for the
same table our files hold what pylance's build holds (under its defaults and each analyzer
option), pylance searches our index exactly as its own (every query form, phrases with
positions), and pylance's appends and ``optimize_indices`` go on from it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import lance
import numpy as np
import pyarrow as pa
import pytest
from lance.file import LanceFileReader
from lance.query import BooleanQuery, FullTextOperator, MatchQuery, Occur, PhraseQuery

import lance_semantic as ls
from lance_semantic.fts import TokenMap

SENTENCES = [
    "The quick brown fox jumps over the lazy dog.",
    "A semantic type names the value domain; the layout may vary freely.",
    "Readers return the layout named by a per-request override.",
    "Les élèves naïfs mangent des crêpes à Noël.",
    "Straße, Grüße und Äpfel über alles",
    "Москва — столица России, а Киев — Украины.",
    "東京は日本の首都です",
    "emoji 🎉 party 🎉 time",
    "They're running; she ran; the runners run quickly!",
    "x" * 45 + " beyond the token length",
    "Email me at someone@example.com or see https://lance.org/docs?page=2",
    "Numbers 3.14159 and 2,718 and 42nd street",
    "",
    None,
]
ROWS = 600


def _docs() -> list[str | None]:
    rng = np.random.default_rng(11)
    out: list[str | None] = []
    for i in range(ROWS):
        a, b = rng.integers(len(SENTENCES), size=2)
        first, second = SENTENCES[a], SENTENCES[b]
        if first is None or rng.random() < 0.02:
            out.append(None)
        else:
            out.append(f"{first} {second or ''} {i}")
    return out


DOCS = _docs()
FILES = ("part_0_tokens.lance", "part_0_docs.lance", "part_0_invert.lance", "metadata.lance")


def _twins(tmp_path: Path, rows_per_file: int = ROWS) -> tuple[str, str]:
    table = pa.table({"id": np.arange(ROWS), "text": pa.array(DOCS, pa.string())})
    uris = str(tmp_path / "ours.lance"), str(tmp_path / "theirs.lance")
    for uri in uris:
        lance.write_dataset(table, uri, max_rows_per_file=rows_per_file)
    return uris


def _folder(uri: str, name: str = "text_idx") -> Path:
    (index,) = [i for i in lance.dataset(uri).describe_indices() if i.name == name]
    (segment,) = index.segments
    return Path(uri) / "_indices" / segment.uuid


def _decoded(folder: Path) -> dict[str, Any]:
    out: dict[str, Any] = {"files": sorted(p.name for p in folder.iterdir())}
    for name in FILES:
        if not (folder / name).exists():
            continue
        reader = LanceFileReader(str(folder / name))
        table = reader.read_all().to_table()
        if name == "part_0_tokens.lance":
            tokens = TokenMap.from_table(table)
            out[name] = (sorted(tokens.items()), table.drop_columns(["_token_fst_bytes"]))
        else:
            out[name] = table
        out[name + " metadata"] = reader.metadata().schema.metadata
    return out


OPTIONS = [
    {},
    {"with_position": True},
    {"stem": False, "remove_stop_words": False},
    {"lower_case": False, "ascii_folding": False},
    {"base_tokenizer": "whitespace"},
    {"base_tokenizer": "raw"},
    {"max_token_length": None},
    {"max_token_length": 5},
    {"custom_stop_words": ["fox", "type"], "remove_stop_words": True},
    {"language": "French", "stem": False, "remove_stop_words": False},
]


@pytest.mark.parametrize("options", OPTIONS, ids=[str(o) or "defaults" for o in OPTIONS])
def test_our_index_holds_what_pylances_build_holds(tmp_path: Path, options: dict[str, Any]) -> None:
    ours, theirs = _twins(tmp_path)
    ls.dataset(ours).create_scalar_index("text", "INVERTED", **options)
    lance.dataset(theirs).create_scalar_index("text", "INVERTED", **options)
    mine, pylances = _decoded(_folder(ours)), _decoded(_folder(theirs))
    for name in mine:
        assert mine[name] == pylances[name], name
    (a,) = lance.dataset(ours).describe_indices()
    (b,) = lance.dataset(theirs).describe_indices()
    assert (a.type_url, a.num_rows_indexed, a.field_names) == (
        b.type_url,
        b.num_rows_indexed,
        b.field_names,
    )
    assert a.details == b.details


QUERIES: list[Any] = [
    "semantic type",
    "running",
    "crêpes noël",
    "москва",
    "the",
    "quick fox layout",
    MatchQuery("lazy dog", "text", operator=FullTextOperator.AND),
    MatchQuery("layout", "text", boost=2.0),
    BooleanQuery(
        [(Occur.MUST, MatchQuery("fox", "text")), (Occur.MUST_NOT, MatchQuery("dog", "text"))]
    ),
    PhraseQuery("semantic type", "text"),
    '"value domain"',
    PhraseQuery("quick fox", "text", slop=1),
]


@pytest.mark.parametrize("rows_per_file", [ROWS, 150], ids=["one fragment", "four fragments"])
def test_pylance_searches_our_index_as_its_own(tmp_path: Path, rows_per_file: int) -> None:
    ours, theirs = _twins(tmp_path, rows_per_file)
    ls.dataset(ours).create_scalar_index("text", "INVERTED", with_position=True)
    lance.dataset(theirs).create_scalar_index("text", "INVERTED", with_position=True)
    a, b = lance.dataset(ours), lance.dataset(theirs)
    for q in QUERIES:
        got = a.to_table(full_text_query=q, columns=["id"], limit=15)
        want = b.to_table(full_text_query=q, columns=["id"], limit=15)
        assert _ranked(got, 15) == _ranked(want, 15), q
    plan = a.scanner(full_text_query="fox", columns=["id"]).explain_plan()
    assert "MatchQuery" in plan


def _ranked(t: pa.Table, limit: int) -> list[tuple[float, int | None]]:
    """(score, id) best first, ties by id (the order of equal scores is arbitrary); when
    ``limit`` rows came back, those tied at the last score are counted, not named (which
    of them make the cut is arbitrary too)."""
    scores = np.round(t.column("_score").to_numpy().astype(np.float64), 5)
    pairs: list[tuple[float, int | None]] = sorted(
        zip((-scores).tolist(), t.column("id").to_pylist(), strict=True)
    )
    if t.num_rows == limit:
        last = pairs[-1][0]
        pairs = [(s, None if s == last else i) for s, i in pairs]
    return pairs


def test_pylance_appends_to_and_optimizes_our_index(tmp_path: Path) -> None:
    ours, theirs = _twins(tmp_path)
    ls.dataset(ours).create_scalar_index("text", "INVERTED")
    lance.dataset(theirs).create_scalar_index("text", "INVERTED")
    more = pa.table(
        {"id": np.arange(ROWS, ROWS + 50), "text": [f"fresh fox {i}" for i in range(50)]}
    )
    for uri in (ours, theirs):
        lance.dataset(uri).insert(more)
        lance.dataset(uri).delete("id % 9 = 0")
    for step in ("appended", "optimized"):
        a, b = lance.dataset(ours), lance.dataset(theirs)
        for q in ("fox", "fresh", "semantic type"):
            got = a.to_table(full_text_query=q, columns=["id"], limit=30)
            want = b.to_table(full_text_query=q, columns=["id"], limit=30)
            assert _ranked(got, 30) == _ranked(want, 30), (step, q)
        for uri in (ours, theirs):
            lance.dataset(uri).optimize.optimize_indices()
    (index,) = lance.dataset(ours).describe_indices()
    covered = set().union(*(s.fragment_ids for s in index.segments))
    assert covered == {f.fragment_id for f in lance.dataset(ours).get_fragments()}


def test_an_untrained_index_is_pylances_empty_index(tmp_path: Path) -> None:
    ours, theirs = _twins(tmp_path)
    ls.dataset(ours).create_scalar_index("text", "INVERTED", train=False)
    lance.dataset(theirs).create_scalar_index("text", "INVERTED", train=False)
    mine, pylances = _decoded(_folder(ours)), _decoded(_folder(theirs))
    for name in mine:
        assert mine[name] == pylances[name], name
    (index,) = lance.dataset(ours).describe_indices()
    assert [len(s.fragment_ids) for s in index.segments] == [0]
    # an empty index covers no fragment: pylance searches every row without it, beside
    # ours as beside its own
    got = lance.dataset(ours).to_table(full_text_query="fox", columns=["id"])
    want = lance.dataset(theirs).to_table(full_text_query="fox", columns=["id"])
    assert sorted(got.column("id").to_pylist()) == sorted(want.column("id").to_pylist())
    assert got.num_rows > 0


def test_replace_false_refuses_an_existing_name_and_commits_nothing(tmp_path: Path) -> None:
    ours, _ = _twins(tmp_path)
    ds = ls.dataset(ours)
    ds.create_scalar_index("text", "INVERTED")
    version = ls.dataset(ours).version
    with pytest.raises(RuntimeError, match="Index name 'text_idx' already exists"):
        ls.dataset(ours).create_scalar_index("text", "INVERTED", replace=False)
    assert ls.dataset(ours).version == version
    ls.dataset(ours).create_scalar_index("text", "FTS", with_position=True)
    (index,) = lance.dataset(ours).describe_indices()
    assert index.type_url == "/lance.table.InvertedIndexDetails"
    assert lance.dataset(ours).to_table(full_text_query='"lazy dog"').num_rows > 0


def test_a_flagged_tables_strings_in_any_layout_are_indexed(tmp_path: Path) -> None:
    uri = str(tmp_path / "flagged.lance")
    half = ROWS // 2
    first = pa.table({"id": np.arange(half), "text": pa.array(DOCS[:half], pa.string())})
    second = pa.table(
        {"id": np.arange(half, ROWS), "text": pa.array(DOCS[half:], pa.large_string())}
    )
    ls.write_dataset(first, uri, semantic_types=True)
    ls.write_dataset(second, uri, mode="append")
    ds = ls.dataset(uri)
    assert ds.semantic_types
    ds.create_scalar_index("text", "INVERTED")
    # the same documents in the same fragments on a legacy twin, indexed by pylance: the
    # same files
    _, theirs = _twins(tmp_path, half)
    lance.dataset(theirs).create_scalar_index("text", "INVERTED")
    (entry,) = ls.dataset(uri).list_indices()
    mine = _decoded(Path(uri) / "_indices" / str(entry["uuid"]))
    pylances = _decoded(_folder(theirs))
    for name in mine:
        assert mine[name] == pylances[name], name


@pytest.mark.parametrize("built_by", ["pylance", "ours"])
def test_our_optimize_extends_the_index_as_pylance_does(tmp_path: Path, built_by: str) -> None:
    ours, theirs = _twins(tmp_path)
    options = {"with_position": True, "stem": False}
    lib = lance if built_by == "pylance" else ls
    lib.dataset(ours).create_scalar_index("text", "INVERTED", **options)
    lance.dataset(theirs).create_scalar_index("text", "INVERTED", **options)
    more = pa.table({"id": np.arange(ROWS, ROWS + 40), "text": [f"new fox {i}" for i in range(40)]})
    for uri in (ours, theirs):
        lance.dataset(uri).insert(more)
        lance.dataset(uri).delete("id % 7 = 0")
    ls.dataset(ours).optimize.optimize_indices()
    lance.dataset(theirs).optimize.optimize_indices()
    (index,) = lance.dataset(ours).describe_indices()
    (segment,) = index.segments
    assert segment.fragment_ids == {f.fragment_id for f in lance.dataset(ours).get_fragments()}
    # pylance's layout: the old partition kept, one of the new rows added
    files = sorted(p.name for p in _folder(ours).iterdir())
    assert files == sorted(p.name for p in _folder(theirs).iterdir())
    assert "part_1_docs.lance" in files
    # the analyzer it was built with is kept, and pylance finds what it finds in its own
    mine = _decoded(_folder(ours))
    assert b'"stem":false' in mine["metadata.lance metadata"][b"params"]
    a, b = lance.dataset(ours), lance.dataset(theirs)
    for q in ("fox", "new", PhraseQuery("semantic type", "text"), "running"):
        got = a.to_table(full_text_query=q, columns=["id"], limit=25)
        want = b.to_table(full_text_query=q, columns=["id"], limit=25)
        assert _ranked(got, 25) == _ranked(want, 25), q


@pytest.mark.parametrize("with_position", [False, True], ids=["no positions", "positions"])
@pytest.mark.parametrize("built_by", ["pylance", "ours"])
def test_compaction_remaps_the_index_as_pylance_does(
    tmp_path: Path, built_by: str, with_position: bool
) -> None:
    ours, theirs = _twins(tmp_path, 100)
    lib = lance if built_by == "pylance" else ls
    lib.dataset(ours).create_scalar_index("text", "INVERTED", with_position=with_position)
    lance.dataset(theirs).create_scalar_index("text", "INVERTED", with_position=with_position)
    for uri in (ours, theirs):
        lance.dataset(uri).delete("id % 5 = 0 or id >= 590")
    ls.dataset(ours).optimize.compact_files(target_rows_per_fragment=300)
    lance.dataset(theirs).optimize.compact_files(target_rows_per_fragment=300)
    a, b = lance.dataset(ours), lance.dataset(theirs)
    assert [f.count_rows() for f in a.get_fragments()] == [
        f.count_rows() for f in b.get_fragments()
    ]
    (index,) = a.describe_indices()
    (segment,) = index.segments
    assert segment.fragment_ids == {f.fragment_id for f in a.get_fragments()}
    queries: list[Any] = ["fox", "semantic type", "москва", "running"]
    if with_position:
        queries.append('"lazy dog"')
    for q in queries:
        got = a.to_table(full_text_query=q, columns=["id"], limit=40)
        want = b.to_table(full_text_query=q, columns=["id"], limit=40)
        assert _ranked(got, 40) == _ranked(want, 40), q
        # and our reader, through the remapped index
        mine = ls.dataset(ours).to_table(full_text_query=q, columns=["id"], limit=40)
        assert _ranked(mine, 40) == _ranked(want, 40), q
