"""Where the compiled JSON kernels are cached on disk, without importing numba (layer L2).

numba's own cache lives next to the source file (``__pycache__`` in ``site-packages``) or under
``NUMBA_CACHE_DIR`` in a folder named after the source's directory, so every new virtual
environment compiles the kernels again (10 to 60 seconds). lance-semantic keeps them in one
user-wide folder instead, named after what the compiled code depends on -- the kernels' source
text, the numba version -- and not after where the source is installed::

    <cache root>/numba-<numba version>-<digest of the kernel sources>/

The cache root is ``$LANCE_SEMANTIC_CACHE_DIR`` if set, else ``$NUMBA_CACHE_DIR/lance-semantic``
if that is set, else ``lance-semantic`` in the platform's cache folder (``$XDG_CACHE_HOME`` or
``~/.cache`` on Linux, ``~/Library/Caches`` on macOS, ``%LOCALAPPDATA%`` on Windows). numba's
index in that folder also keys every entry by signature, CPU and Python version, so one folder
serves every environment of one user.
"""

from __future__ import annotations

import functools
import glob
import hashlib
import os
import sys
from importlib import metadata
from pathlib import Path

__all__ = ["cache_dir", "source_digest", "is_cached", "KERNEL_SOURCES"]

_HERE = Path(__file__).resolve().parent
#: the files whose text the compiled kernels depend on (the kernels read the constants of
#: ``_jsonb_format`` at compile time, so a change there must invalidate the cache too)
KERNEL_SOURCES = (_HERE / "_jsonb_kernels.py", _HERE / "_jsonb_format.py")


def _user_cache_root() -> Path:
    own = os.environ.get("LANCE_SEMANTIC_CACHE_DIR")
    if own:
        return Path(own).expanduser()
    numba_dir = os.environ.get("NUMBA_CACHE_DIR")
    if numba_dir:
        return Path(numba_dir).expanduser() / "lance-semantic"
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or str(Path.home() / "AppData" / "Local")
        return Path(base) / "lance-semantic" / "Cache"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "lance-semantic"
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "lance-semantic"


@functools.lru_cache(maxsize=1)
def source_digest() -> str:
    """sha256 of the kernel sources (hex): the compiled code is valid while it is unchanged."""
    h = hashlib.sha256()
    for path in KERNEL_SOURCES:
        h.update(path.read_bytes())
    return h.hexdigest()


def _numba_version() -> str:
    try:
        return metadata.version("numba")
    except metadata.PackageNotFoundError:  # pragma: no cover - numba is a dependency
        return "unknown"


def cache_dir() -> Path:
    """The folder the kernels are cached in (it may not exist yet)."""
    name = f"numba-{_numba_version()}-{source_digest()[:16]}"
    return _user_cache_root() / name


def is_cached(kernel: str) -> bool:
    """Whether numba's index for ``kernel`` (a function of ``_jsonb_kernels``) exists in
    :func:`cache_dir` for this Python: then the first call loads it instead of compiling."""
    abi = getattr(sys, "abiflags", "")
    py = f"py{sys.version_info[0]}{sys.version_info[1]}{abi}"
    pattern = os.path.join(glob.escape(str(cache_dir())), f"_jsonb_kernels.{kernel}-*.{py}.nbi")
    return bool(glob.glob(pattern))
