"""Every code block of README.md and docs/**/*.md runs (tests/docs/blocks.py says how), in
a new empty working directory per page, and runs again: the examples write into temporary
folders of their own, never at fixed paths. For the pages whose old README tests asserted
what the example leaves, those assertions are kept (``CHECKS``)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from tests.docs.blocks import LANGUAGES, blocks, pages, run_page
from tests.docs.page_checks import CHECKS, RAY_PAGE

pytestmark = pytest.mark.interop


def _runnable() -> list[str]:
    """The pages with a block to run (the Ray page runs in tests/interop/test_ray.py, on the
    local Ray that module starts once)."""
    return [
        page for page in pages() if page != RAY_PAGE and any(b.lang != "text" for b in blocks(page))
    ]


def test_the_ray_page_has_blocks_and_test_ray_runs_them() -> None:
    assert any(b.lang == "python" for b in blocks(RAY_PAGE))
    ray_tests = (Path(__file__).parents[1] / "interop" / "test_ray.py").read_text()
    assert "RAY_PAGE" in ray_tests and "run_page" in ray_tests


@pytest.mark.parametrize("page", pages())
def test_every_block_is_tagged(page: str) -> None:
    """A block says what it is: ``python`` and ``bash`` run, ``text`` is output."""
    untagged = [b.where for b in blocks(page) if b.lang not in LANGUAGES]
    assert not untagged, f"blocks tagged neither {LANGUAGES}: {untagged}"


@pytest.mark.parametrize("page", _runnable())
def test_the_blocks_of_a_page_run_and_run_again(
    page: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The page's blocks in order, then again in the same working directory, as a reader who
    runs the examples a second time (a server the page started keeps running)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    run_page(page, tmp_path, CHECKS.get(page))
