"""The documentation site builds with ``mkdocs build --strict``: every page in the nav, no
link to a missing page or anchor, every ``::: lance_semantic...`` reference resolved, and the
API reference names only public import paths."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tests.docs.blocks import ROOT

#: what a program imports; everything else under lance_semantic is internal and moves
PUBLIC = {
    "lance_semantic",
    "lance_semantic.errors",
    "lance_semantic.fragment",
    "lance_semantic.ray",
}


def test_mkdocs_build_strict(tmp_path: Path) -> None:
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), *filter(None, [env.get("PYTHONPATH")])])
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "site" / "reference" / "tables" / "index.html").is_file()
    assert (tmp_path / "site" / "spec" / "semantic-type-contract.txt").read_bytes() == (
        ROOT / "docs" / "spec" / "semantic-type-contract.txt"
    ).read_bytes()


def test_the_api_reference_names_public_paths_only() -> None:
    """``::: lance_semantic.X`` directives name a public module or a name it exports."""
    import lance_semantic as ls

    for page in sorted((ROOT / "docs").rglob("*.md")):
        for target in re.findall(r"^::: *(\S+)", page.read_text(encoding="utf-8"), re.M):
            module, _, name = target.rpartition(".")
            assert target in PUBLIC or (module == "lance_semantic" and name in ls.__all__), (
                f"{page.relative_to(ROOT)}: {target} is not a public import path"
            )
