"""The row address map a compaction remaps an index with (vector/ivf_remap.py)."""

from __future__ import annotations

import numpy as np
import pytest

from lance_semantic.vector import REMOVED_ROW, row_address_map


def test_live_rows_take_the_new_addresses_in_order() -> None:
    old = [(3, 4, np.array([0, 2], np.uint32)), (5, 3, None)]
    mapping = row_address_map(old, [(9, 3), (10, 2)])
    assert mapping[3].tolist() == [int(REMOVED_ROW), 9 << 32, int(REMOVED_ROW), (9 << 32) + 1]
    assert mapping[5].tolist() == [(9 << 32) + 2, 10 << 32, (10 << 32) + 1]


@pytest.mark.parametrize("new", [[(9, 2)], [(9, 4)]])
def test_row_counts_that_do_not_match_are_refused(new: list[tuple[int, int]]) -> None:
    with pytest.raises(ValueError, match="the new fragments hold"):
        row_address_map([(3, 3, None)], new)
