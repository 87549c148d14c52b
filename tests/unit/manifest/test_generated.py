"""The committed generated protobuf modules match the .proto files."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
PB = ROOT / "src" / "lance_semantic" / "manifest" / "_pb"


def test_generated_modules_are_up_to_date(tmp_path: Path) -> None:
    env = {**os.environ, "OUT_DIR": str(tmp_path), "PYTHON": sys.executable}
    subprocess.run(
        ["bash", str(ROOT / "scripts" / "gen_protos.sh")], check=True, env=env, capture_output=True
    )
    generated = sorted(p.name for p in tmp_path.iterdir())
    assert generated == sorted(p.name for p in PB.iterdir() if p.is_file())
    for name in generated:
        if name.endswith("_pb2.py"):
            # the serialized descriptors depend only on the .proto files (not on the
            # grpcio-tools version, which changes comments and helper code)
            assert _descriptor(tmp_path / name) == _descriptor(PB / name), name


def _descriptor(path: Path) -> str:
    (line,) = [ln for ln in path.read_text().splitlines() if "AddSerializedFile(" in ln]
    return line


def test_no_runtime_version_check_in_generated_code() -> None:
    for path in PB.glob("*_pb2.py"):
        text = path.read_text()
        assert "_runtime_version" not in text
        assert "from . import" in text or path.name == "lance_file_pb2.py"
