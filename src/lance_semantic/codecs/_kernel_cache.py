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

The module functions describe the JSON codec's kernels; :class:`KernelCache` describes any
other kernels module the same way (vector search's training kernels use one), each keyed by
its own sources.
"""

from __future__ import annotations

import glob
import hashlib
import os
import sys
from importlib import metadata
from pathlib import Path

__all__ = [
    "cache_dir",
    "source_digest",
    "is_cached",
    "KERNEL_SOURCES",
    "KernelCache",
    "JSON_KERNELS",
]

_HERE = Path(__file__).resolve().parent
#: the files whose text the compiled kernels depend on (the kernels read the constants of
#: ``_jsonb_format`` at compile time, so a change there must invalidate the cache too)
KERNEL_SOURCES = (_HERE / "_jsonb_kernels.py", _HERE / "_jsonb_format.py")


class KernelCache:
    """The disk cache of one kernels module: ``module`` is its file name without ``.py``,
    ``sources`` the files whose text its compiled code depends on (itself first)."""

    def __init__(self, module: str, sources: tuple[Path, ...]) -> None:
        self.module = module
        self.sources = sources
        self._digest: str | None = None

    def source_digest(self) -> str:
        """sha256 of the sources (hex): the compiled code is valid while they are unchanged."""
        if self._digest is None:
            h = hashlib.sha256()
            for path in self.sources:
                h.update(path.read_bytes())
            self._digest = h.hexdigest()
        return self._digest

    def cache_dir(self) -> Path:
        """The folder the kernels are cached in (it may not exist yet)."""
        return _user_cache_root() / f"numba-{_numba_version()}-{self.source_digest()[:16]}"

    def is_cached(self, kernel: str) -> bool:
        """Whether numba's index for ``kernel`` (a function of the module) exists in
        :meth:`cache_dir` for this Python: then the first call loads it instead of compiling."""
        abi = getattr(sys, "abiflags", "")
        py = f"py{sys.version_info[0]}{sys.version_info[1]}{abi}"
        folder = glob.escape(str(self.cache_dir()))
        return bool(glob.glob(os.path.join(folder, f"{self.module}.{kernel}-*.{py}.nbi")))


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


def _numba_version() -> str:
    try:
        return metadata.version("numba")
    except metadata.PackageNotFoundError:  # pragma: no cover - numba is a dependency
        return "unknown"


#: the JSON codec's kernels (``_jsonb_kernels``)
JSON_KERNELS = KernelCache("_jsonb_kernels", KERNEL_SOURCES)


def source_digest() -> str:
    """sha256 of the JSON kernel sources (hex): the compiled code is valid while unchanged."""
    return JSON_KERNELS.source_digest()


def cache_dir() -> Path:
    """The folder the JSON kernels are cached in (it may not exist yet)."""
    return JSON_KERNELS.cache_dir()


def is_cached(kernel: str) -> bool:
    """Whether numba's index for ``kernel`` (a function of ``_jsonb_kernels``) exists in
    :func:`cache_dir` for this Python: then the first call loads it instead of compiling."""
    return JSON_KERNELS.is_cached(kernel)
