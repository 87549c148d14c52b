"""``docs/parity.md`` is what ``scripts/pylance_parity.py`` writes today: every public name
of pylance's ``lance.LanceDataset`` and ``lance.fragment.LanceFragment`` has a row, each row
agrees with what the classes have (``dir()``), and the committed page is current."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.interop


def test_the_parity_page_is_current() -> None:
    script = runpy.run_path(str(ROOT / "scripts" / "pylance_parity.py"))
    committed = (ROOT / "docs" / "parity.md").read_text(encoding="utf-8")
    assert committed == script["page"](), "run: python scripts/pylance_parity.py --write"


@pytest.mark.parametrize("table", ["DATASET_NOTES", "FRAGMENT_NOTES"])
def test_a_note_that_contradicts_the_classes_stops_the_script(table: str) -> None:
    """A ``same`` note for a name we lack, or a note for a name pylance lacks, is refused
    rather than written into the page."""
    script = runpy.run_path(str(ROOT / "scripts" / "pylance_parity.py"))
    notes = script[table]
    notes["no_such_pylance_name"] = (script["SAME"], "")
    with pytest.raises(SystemExit, match="no_such_pylance_name: not a pylance name"):
        script["page"]()
    del notes["no_such_pylance_name"]
    name = "create" if table == "FRAGMENT_NOTES" else "drop"  # names we do not have
    notes[name] = (script["SAME"], "")
    with pytest.raises(SystemExit, match=f"{name}: marked 'same' but"):
        script["page"]()
