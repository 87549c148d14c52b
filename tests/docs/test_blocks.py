"""Every code block of README.md and docs/**/*.md runs (tests/docs/blocks.py says how), in
a new empty working directory per page, and runs again: the examples write into temporary
folders of their own, never at fixed paths. For the pages whose old README tests asserted
what the example leaves, those assertions are kept (``CHECKS``)."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest

from tests.docs.blocks import LANGUAGES, blocks, pages, run_page
from tests.docs.page_checks import CHECKS, RAY_PAGE

pytestmark = pytest.mark.interop


def _params() -> list[Any]:
    elsewhere = pytest.mark.skip(reason="run by tests/interop/test_ray.py, on its local Ray")
    return [
        pytest.param(page, id=page, marks=[elsewhere] if page == RAY_PAGE else [])
        for page in pages()
    ]


@pytest.mark.parametrize("page", pages())
def test_every_block_is_tagged(page: str) -> None:
    """A block says what it is: ``python`` and ``bash`` run, ``text`` is output."""
    untagged = [b.where for b in blocks(page) if b.lang not in LANGUAGES]
    assert not untagged, f"blocks tagged neither {LANGUAGES}: {untagged}"


@pytest.mark.parametrize("page", _params())
def test_the_blocks_of_a_page_run_and_run_again(
    page: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The page's blocks in order, then again in the same working directory, as a reader who
    runs the examples a second time (a server the page started keeps running)."""
    if not any(b.lang != "text" for b in blocks(page)):
        pytest.skip("no runnable block")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    run_page(page, tmp_path, CHECKS.get(page))
