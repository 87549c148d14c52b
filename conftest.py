"""Doctests of the package run in a fresh temporary directory, so their examples write
tables at relative paths (``ls.write_dataset(data, "t.lance")``), as pylance's do.

At the repository root rather than in ``src/lance_semantic`` so that it is not packaged:
the wheel holds only ``src/lance_semantic`` (``[tool.hatch.build.targets.wheel]``).

The package is imported here, before pytest imports its modules by path for their doctests:
otherwise pytest (``--import-mode=importlib``) binds the attribute ``lance_semantic.dataset``
to the subpackage when it loads ``src/lance_semantic/dataset/*.py`` first, hiding the
function ``ls.dataset`` from the examples (and from every test of the session).
"""

from __future__ import annotations

from pathlib import Path

import pytest

import lance_semantic  # noqa: F401  (see above)


@pytest.fixture(autouse=True)
def _doctest_in_tmp_path(request: pytest.FixtureRequest) -> None:
    if isinstance(request.node, pytest.DoctestItem):  # other tests get no directory
        tmp_path: Path = request.getfixturevalue("tmp_path")
        request.getfixturevalue("monkeypatch").chdir(tmp_path)
