"""``RewrittenIndex`` messages and a Rewrite's index swap (manifest/index_metadata.py)."""

from __future__ import annotations

import pytest

from lance_semantic.manifest import (
    IndexEntry,
    IndexFile,
    RewrittenIndex,
    decode_rewritten_index,
    encode_index_entry,
    encode_rewritten_index,
    index_entries,
    with_rewritten_indices,
)
from lance_semantic.manifest._pb import lance_table_pb2 as tpb

OLD = "00000000-0000-0000-0000-00000000000a"
NEW = "00000000-0000-0000-0000-00000000000b"
OTHER = "00000000-0000-0000-0000-00000000000c"
VECTOR = "/lance.index.pb.VectorIndexDetails"


def _entry(uuid: str, name: str, fragments: tuple[int, ...]) -> IndexEntry:
    files = (IndexFile("auxiliary.idx", 10), IndexFile("index.idx", 5))
    return IndexEntry(uuid, name, (2,), 3, fragments, VECTOR, b"B\x00", 1, 77, None, files)


def _section(*entries: IndexEntry) -> bytes:
    return tpb.IndexSection(indices=[encode_index_entry(e) for e in entries]).SerializeToString()


def _rewritten(old: str = OLD, new: str = NEW) -> bytes:
    files = (IndexFile("auxiliary.idx", 8), IndexFile("index.idx", 5))
    return encode_rewritten_index(RewrittenIndex(old, new, VECTOR, b"B\x00", 1, files))


def test_pylances_message_layout() -> None:
    """1 old_id UUID, 2 new_id UUID, 3 details Any, 4 version, 5 files (measured)."""
    raw = _rewritten()
    assert raw[:2] == b"\x0a\x12" and raw[2:4] == b"\x0a\x10"
    r = decode_rewritten_index(raw)
    assert (r.old_uuid, r.new_uuid, r.index_version) == (OLD, NEW, 1)
    assert [f.path for f in r.files] == ["auxiliary.idx", "index.idx"]


def test_the_entry_is_swapped_and_its_bitmap_follows_the_groups() -> None:
    section = _section(_entry(OLD, "vec_idx", (0, 1, 2, 3)), _entry(OTHER, "other", (4,)))
    groups = [(frozenset({1, 2}), (7,)), (frozenset({4}), (8,)), (frozenset({9}), (10,))]
    swapped = index_entries(with_rewritten_indices(section, groups, (_rewritten(),)))
    assert [(e.uuid, e.name, e.fragment_ids) for e in swapped] == [
        (NEW, "vec_idx", (0, 3, 7)),
        (OTHER, "other", (4,)),  # not rewritten: unchanged
    ]
    new = swapped[0]
    assert (new.created_at_ms, new.dataset_version, new.fields) == (77, 3, (2,))
    assert new.files[0].size_bytes == 8


def test_no_rewritten_indices_leave_the_section_as_it_is() -> None:
    section = _section(_entry(OLD, "vec_idx", (0, 1)))
    assert with_rewritten_indices(section, [(frozenset({0, 1}), (2,))], ()) is section


@pytest.mark.parametrize(
    ("groups", "rewritten", "match"),
    [
        ([(frozenset({1, 5}), (7,))], (_rewritten(),), "mixes fragments"),
        ([], (_rewritten(old=OTHER),), "no index"),
        ([], (_rewritten(), _rewritten(new=OTHER)), "twice"),
    ],
)
def test_bad_rewrites_are_value_errors(
    groups: list[tuple[frozenset[int], tuple[int, ...]]], rewritten: tuple[bytes, ...], match: str
) -> None:
    section = _section(_entry(OLD, "vec_idx", (0, 1, 2)))
    with pytest.raises(ValueError, match=match):
        with_rewritten_indices(section, groups, rewritten)
