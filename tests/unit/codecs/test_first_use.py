"""The JSON codec's first use (``codecs/_kernel_gate.py``, ``codecs/_kernel_cache.py``): a
process converts its first small inputs with the pure-Python reference, loads or compiles a
kernel only when its work grows, says so once before a compile, and caches compiled kernels
in one user-wide folder keyed by the kernels' text (not by the path they are installed at)."""

from __future__ import annotations

import logging
import os
import random
import subprocess
import sys
import textwrap
from pathlib import Path
from types import ModuleType

import pyarrow as pa
import pytest

from lance_semantic.codecs import _kernel_cache, _kernel_gate, decode_jsonb, encode_json
from lance_semantic.codecs import json as codec
from lance_semantic.codecs.json_reference import encode_value
from lance_semantic.errors import InvalidJsonError

SRC = str(Path(__file__).resolve().parents[3] / "src")


# ---- the gate ---------------------------------------------------------------------------------
class FakeKernels:
    def __init__(self) -> None:
        self.module = ModuleType("fake_kernels")
        self.loads = 0
        self.warmed: list[str] = []

    def load(self) -> ModuleType:
        self.loads += 1
        return self.module

    def warm(self, kernel: str):  # noqa: ANN201
        return lambda module: self.warmed.append(kernel)


def gate(fake: FakeKernels) -> _kernel_gate.KernelGate:
    return _kernel_gate.KernelGate(fake.load, {k: fake.warm(k) for k in _kernel_gate.KERNELS})


def test_small_work_runs_the_reference_until_the_budget_is_spent(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(_kernel_cache, "is_cached", lambda kernel: False)
    fake = FakeKernels()
    g = gate(fake)
    rate = _kernel_gate.KERNELS["encode_rows"].reference_rate
    budget = int(_kernel_gate.REFERENCE_SECONDS_UNCACHED * rate)
    with caplog.at_level(logging.WARNING, logger="lance_semantic"):
        assert g.kernels_for("encode_rows", budget // 2) is None
        assert g.kernels_for("encode_rows", budget // 2) is None
        assert fake.loads == 0 and not caplog.records  # numba not even imported
        assert g.kernels_for("encode_rows", 1) is fake.module  # over the budget: compile
        assert g.kernels_for("encode_rows", 1) is fake.module  # and from now on, the kernel
        assert g.kernels_for("render_rows", 10) is None  # each kernel has its own budget
    assert fake.warmed == ["encode_rows"]
    messages = [r.getMessage() for r in caplog.records]
    assert len(messages) == 1
    assert messages[0].startswith("lance-semantic: compiling the JSON codec's encoder")
    assert "first use, ~" in messages[0] and messages[0].endswith("...")


def test_a_cached_kernel_is_loaded_sooner_and_silently(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(_kernel_cache, "is_cached", lambda kernel: True)
    fake = FakeKernels()
    g = gate(fake)
    with caplog.at_level(logging.WARNING, logger="lance_semantic"):
        rate = _kernel_gate.KERNELS["render_rows"].reference_rate
        budget = int(_kernel_gate.REFERENCE_SECONDS_CACHED * rate)
        assert g.kernels_for("render_rows", budget) is None
        assert g.kernels_for("render_rows", 1) is fake.module
        # a call larger than the whole budget goes to the kernel at once
        assert g.kernels_for("check_rows", 1 << 30)
    assert fake.warmed == ["render_rows", "check_rows"] and not caplog.records


def test_warm_up_prepares_every_kernel_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_kernel_cache, "is_cached", lambda kernel: True)
    fake = FakeKernels()
    g = gate(fake)
    assert g.kernels_for("encode_rows", 1 << 30) is fake.module
    took = g.warm_up()
    assert set(took) == set(_kernel_gate.KERNELS) and took["encode_rows"] == 0.0
    assert sorted(fake.warmed) == sorted(_kernel_gate.KERNELS)
    g.warm_up()
    assert len(fake.warmed) == len(_kernel_gate.KERNELS)


def test_reference_bytes_zero_forces_the_kernels() -> None:
    fake = FakeKernels()
    g = gate(fake)
    g.reference_bytes = 0
    assert g.kernels_for("encode_rows", 1) is fake.module


# ---- the reference path gives the kernels' results --------------------------------------------
@pytest.fixture
def reference_only(monkeypatch: pytest.MonkeyPatch) -> None:
    fresh = _kernel_gate.KernelGate(codec._kernels, codec._GATE._warm)
    fresh.reference_bytes = 1 << 40
    monkeypatch.setattr(codec, "_GATE", fresh)


def _docs(n: int) -> list[str | None]:
    r = random.Random(5)
    out: list[str | None] = []
    for i in range(n):
        k = r.random()
        if k < 0.1:
            out.append(None)
        elif k < 0.5:
            out.append(f'{{"id": {i}, "x": [{r.random()}, "s\\n{i}", null, true], "e": {{}}}}')
        else:
            out.append(str(r.randrange(-(2**70), 2**70)) if k < 0.7 else f'"{"é" * (i % 5)}"')
    return out


def test_reference_path_equals_the_kernels(reference_only: None) -> None:
    docs = _docs(400)
    arr = pa.chunked_array([pa.array(docs[:150]), pa.array(docs[150:])])
    sliced = pa.array(docs, pa.large_string()).slice(37, 200)
    ours = [encode_json(arr, path="j"), encode_json(sliced, path="j")]
    texts = [decode_jsonb(x, path="j") for x in ours]
    codec._GATE.reference_bytes = 0  # the kernels now
    codec._GATE._budget.clear()
    kernels = [encode_json(arr, path="j"), encode_json(sliced, path="j")]
    assert [x.to_pylist() for x in ours] == [x.to_pylist() for x in kernels]
    assert [x.to_pylist() for x in texts] == [
        decode_jsonb(x, path="j").to_pylist() for x in kernels
    ]
    assert ours[0].to_pylist()[:3] == [encode_value(d) if d else None for d in docs[:3]]
    codec.validate_jsonb(ours[0], path="j")


def test_reference_path_errors_name_the_row(reference_only: None) -> None:
    arr = pa.chunked_array([pa.array(["[1]", None]), pa.array(["{}", '{"a": 1, "a": 2}'])])
    with pytest.raises(InvalidJsonError, match="duplicate key") as info:
        encode_json(arr, path="doc")
    assert (info.value.field_path, info.value.row) == ("doc", 3)
    bad = pa.array([encode_value("1"), None, b"junk"], pa.large_binary())
    with pytest.raises(InvalidJsonError, match="container header") as info:
        codec.validate_jsonb(bad, path="b")
    assert info.value.row == 2


# ---- the cache folder -------------------------------------------------------------------------
def test_cache_folder_is_keyed_by_content_not_path(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("LANCE_SEMANTIC_CACHE_DIR", str(tmp_path / "own"))
    here = _kernel_cache.cache_dir()
    assert here.parent == tmp_path / "own"
    assert here.name.startswith("numba-") and _kernel_cache.source_digest()[:16] in here.name
    assert str(Path(_kernel_cache.__file__).parent) not in str(here)
    monkeypatch.delenv("LANCE_SEMANTIC_CACHE_DIR")
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "nb"))
    assert _kernel_cache.cache_dir().parent == tmp_path / "nb" / "lance-semantic"
    monkeypatch.delenv("NUMBA_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    if sys.platform.startswith("linux"):
        assert _kernel_cache.cache_dir().parent == tmp_path / "xdg" / "lance-semantic"
    assert not _kernel_cache.is_cached("encode_rows")


def test_kernels_are_cached_in_the_user_folder(tmp_path: Path) -> None:
    """A new process with an empty cache folder: warm_up compiles into it (slow, the first
    time on a machine, so the kernels are not compiled here: the folder is checked to be the
    one numba's cache writes to)."""
    from lance_semantic.codecs import _jsonb_kernels

    dispatcher = _jsonb_kernels.encode_rows
    assert Path(dispatcher._cache.cache_path) == _kernel_cache.cache_dir()


# ---- a fresh process --------------------------------------------------------------------------
FIRST_RUN = textwrap.dedent(
    """
    import os, sys, tempfile, time
    import pyarrow as pa
    import lance_semantic as ls
    t0 = time.perf_counter()
    uri = os.path.join(tempfile.mkdtemp(), "t.lance")
    docs = ['{"a": 1, "b": [1.5, null, "x"]}', None, "[true]"] * 1000
    ls.write_dataset(pa.table({"doc": pa.array(docs, pa.json_())}), uri)
    out = ls.dataset(uri).to_table().column("doc").to_pylist()
    assert out[:3] == ['{"a":1,"b":[1.5,null,"x"]}', None, "[true]"], out[:3]
    print(f"{time.perf_counter() - t0:.2f}", "numba" in sys.modules)
    """
)


def test_a_first_small_json_write_and_read_never_waits_for_numba(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": SRC, "LANCE_SEMANTIC_CACHE_DIR": str(tmp_path / "cache")}
    done = subprocess.run(
        [sys.executable, "-c", FIRST_RUN], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    seconds, numba_imported = done.stdout.split()
    assert numba_imported == "False"
    assert done.stderr == ""
    assert float(seconds) < 5
    assert not (tmp_path / "cache").exists()
