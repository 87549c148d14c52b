"""When the JSON codec runs its numba kernels, and the line it prints before compiling one
(layer L2).

A kernel is worth its start-up only for enough work: importing numba and loading a cached
kernel takes about a second, compiling one 10 to 30 seconds (two cores), while the pure-Python
reference (:mod:`~lance_semantic.codecs.json_reference`, byte for byte the same results)
converts about 1 MB of JSON text a second to JSONB and renders 1.5 MB of JSONB a second (more
for text-heavy documents, less for float-heavy ones). So each process converts its first JSON
with the reference -- about :data:`REFERENCE_SECONDS_CACHED` of work per kernel when the
kernel is in the disk cache, :data:`REFERENCE_SECONDS_UNCACHED` when it would have to be
compiled -- and a call that would exceed that budget loads (or compiles) the kernel, which
every later call then uses. A first write and read of a few MB of JSON never waits for numba.

Before a compile, one line goes to the ``lance_semantic`` logger (stderr when logging is not
configured): ``lance-semantic: compiling the JSON codec's encoder (first use, ~20 s) ...``.
:func:`KernelGate.warm_up` compiles (or loads) every kernel up front, for an image build or a
benchmark.

The gate serves other kernels modules too: give it their ``kernels`` table, their
:class:`~lance_semantic.codecs._kernel_cache.KernelCache` and the ``owner`` named in the
notice (vector search's training kernels have no reference and set ``reference_bytes`` to 0:
every call runs the kernel, announced before its first compile).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import ModuleType

from . import _kernel_cache

__all__ = [
    "Kernel",
    "KernelGate",
    "REFERENCE_SECONDS_CACHED",
    "REFERENCE_SECONDS_UNCACHED",
    "KERNELS",
]

#: seconds of reference work per kernel and process when the kernel is in the disk cache
REFERENCE_SECONDS_CACHED = 0.25
#: ... and when it is not: a write and a read of JSON then stay within about 5 s in all
REFERENCE_SECONDS_UNCACHED = 2.0


@dataclass(frozen=True)
class Kernel:
    what: str
    #: seconds its compile takes on two cores (measured; said in the notice)
    compile_seconds: int
    #: input bytes the reference converts per second (measured, conservative)
    reference_rate: int


KERNELS: Mapping[str, Kernel] = {
    "encode_rows": Kernel("encoder", 20, 1_000_000),  # JSON text in
    "render_rows": Kernel("decoder", 10, 1_500_000),  # JSONB in
    "check_rows": Kernel("JSONB checker", 10, 3_000_000),  # JSONB in
}

_log = logging.getLogger("lance_semantic")


class KernelGate:
    """Per process: which kernels are ready, and how many reference bytes each has left.

    ``load`` imports the kernels module; ``warm[kernel](module)`` runs ``kernel`` once on a
    tiny input through the codec's own code path (so it compiles exactly the signature real
    calls use)."""

    def __init__(
        self,
        load: Callable[[], ModuleType],
        warm: Mapping[str, Callable[[ModuleType], None]],
        *,
        kernels: Mapping[str, Kernel] | None = None,
        cache: _kernel_cache.KernelCache | None = None,
        owner: str = "the JSON codec",
    ) -> None:
        self._load = load
        self._warm = warm
        self._kernels = KERNELS if kernels is None else kernels
        self._cache = cache
        self._owner = owner
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
        seconds = (
            REFERENCE_SECONDS_CACHED if self._is_cached(kernel) else REFERENCE_SECONDS_UNCACHED
        )
        return int(seconds * self._kernels[kernel].reference_rate)

    def _is_cached(self, kernel: str) -> bool:
        if self._cache is None:
            return _kernel_cache.is_cached(kernel)
        return self._cache.is_cached(kernel)

    def _prepare(self, kernel: str) -> float:
        """Load or compile ``kernel`` (caller holds the lock); seconds it took."""
        start = time.perf_counter()
        if not self._is_cached(kernel):
            folder = _kernel_cache.cache_dir() if self._cache is None else self._cache.cache_dir()
            _log.warning(
                "lance-semantic: compiling %s's %s (first use, ~%d s; "
                "cached in %s for later runs) ...",
                self._owner,
                self._kernels[kernel].what,
                self._kernels[kernel].compile_seconds,
                folder.parent,
            )
        self._warm[kernel](self._load())
        self._ready.add(kernel)
        return time.perf_counter() - start

    def warm_up(self) -> dict[str, float]:
        """Load or compile every kernel now; seconds each took (0.0: already loaded)."""
        took = {}
        with self._lock:
            for kernel in self._kernels:
                took[kernel] = 0.0 if kernel in self._ready else self._prepare(kernel)
        return took
