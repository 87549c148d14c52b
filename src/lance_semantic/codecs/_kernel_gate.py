"""When the JSON codec runs its numba kernels, and the line it prints before compiling one
(layer L2).

A kernel is worth its start-up only for enough work: importing numba and loading a cached
kernel takes about a second, compiling one 10 to 30 seconds (two cores), while the pure-Python
reference (:mod:`~lance_semantic.codecs.json_reference`, byte for byte the same results)
converts 1 to 3 MB of JSON a second. So each process converts its first JSON bytes with the
reference -- up to :data:`REFERENCE_BYTES_CACHED` per kernel when the kernel is in the disk
cache, :data:`REFERENCE_BYTES_UNCACHED` when it would have to be compiled -- and a call that
would exceed that budget loads (or compiles) the kernel, which every later call then uses.
A small first write and read of a JSON column never waits for numba at all.

Before a compile, one line goes to the ``lance_semantic`` logger (stderr when logging is not
configured): ``lance-semantic: compiling the JSON codec's encoder (first use, ~20 s) ...``.
:func:`KernelGate.warm_up` compiles (or loads) every kernel up front, for an image build or a
benchmark.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from types import ModuleType

from . import _kernel_cache

__all__ = ["KernelGate", "REFERENCE_BYTES_CACHED", "REFERENCE_BYTES_UNCACHED", "KERNELS"]

#: JSON bytes per kernel and process converted by the reference when the kernel is cached
REFERENCE_BYTES_CACHED = 256 << 10
#: ... and when it is not (the reference then still finishes well before a compile would)
REFERENCE_BYTES_UNCACHED = 4 << 20

#: kernel -> (what it is, seconds its compile takes on two cores, measured)
KERNELS: Mapping[str, tuple[str, int]] = {
    "encode_rows": ("encoder", 20),
    "render_rows": ("decoder", 10),
    "check_rows": ("JSONB checker", 10),
}

_log = logging.getLogger("lance_semantic")


class KernelGate:
    """Per process: which kernels are ready, and how many reference bytes each has left.

    ``load`` imports the kernels module; ``warm[kernel](module)`` runs ``kernel`` once on a
    tiny input through the codec's own code path (so it compiles exactly the signature real
    calls use)."""

    def __init__(
        self, load: Callable[[], ModuleType], warm: Mapping[str, Callable[[ModuleType], None]]
    ) -> None:
        self._load = load
        self._warm = warm
        self._lock = threading.Lock()
        self._ready: set[str] = set()
        self._budget: dict[str, int] = {}
        #: 0 forces the kernels on every call (the tests of the fast path set it)
        self.reference_bytes: int | None = None

    def kernels_for(self, kernel: str, nbytes: int) -> ModuleType | None:
        """The kernels module when this call of ``kernel`` over ``nbytes`` bytes should run
        the kernel (loaded or compiled now if need be), None when the reference should."""
        if kernel in self._ready:
            return self._load()
        with self._lock:
            if kernel not in self._ready:
                if kernel not in self._budget:
                    self._budget[kernel] = self._initial_budget(kernel)
                if nbytes <= self._budget[kernel]:
                    self._budget[kernel] -= nbytes
                    return None
                self._prepare(kernel)
        return self._load()

    def _initial_budget(self, kernel: str) -> int:
        if self.reference_bytes is not None:
            return self.reference_bytes
        if _kernel_cache.is_cached(kernel):
            return REFERENCE_BYTES_CACHED
        return REFERENCE_BYTES_UNCACHED

    def _prepare(self, kernel: str) -> float:
        """Load or compile ``kernel`` (caller holds the lock); seconds it took."""
        start = time.perf_counter()
        if not _kernel_cache.is_cached(kernel):
            what, seconds = KERNELS[kernel]
            _log.warning(
                "lance-semantic: compiling the JSON codec's %s (first use, ~%d s; "
                "cached in %s for later runs) ...",
                what,
                seconds,
                _kernel_cache.cache_dir().parent,
            )
        self._warm[kernel](self._load())
        self._ready.add(kernel)
        return time.perf_counter() - start

    def warm_up(self) -> dict[str, float]:
        """Load or compile every kernel now; seconds each took (0.0: already loaded)."""
        took = {}
        with self._lock:
            for kernel in KERNELS:
                took[kernel] = 0.0 if kernel in self._ready else self._prepare(kernel)
        return took
