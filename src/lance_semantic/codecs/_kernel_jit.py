"""``njit`` with lance-semantic's user-wide disk cache (layer L2; imports numba).

:func:`cached_jit` compiles a kernel the way the JSON codec's are: ``nogil``, cached in the
folder of a :class:`~lance_semantic.codecs._kernel_cache.KernelCache` (keyed by the kernels'
source text, not by where they are installed), else where numba caches (``cache=True``), else
not cached when no location is writable (then every process compiles). Used by the JSON
codec's kernels and by vector search's training kernels.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from numba import njit

from ._kernel_cache import KernelCache

__all__ = ["cached_jit"]

_log = logging.getLogger(__name__)


def _cache_class(cache: KernelCache) -> Any:
    """numba's per-function disk cache, looking first in ``cache``'s folder, then where numba
    looks; None if this numba has no such hooks (then plain ``cache=True`` is used)."""
    try:
        from numba.core.caching import (
            CompileResultCacheImpl,
            FunctionCache,
            _CacheLocator,
            _SourceFileBackedLocatorMixin,
        )
    except ImportError:  # pragma: no cover - numba moved its cache internals
        return None

    class UserWideLocator(_SourceFileBackedLocatorMixin, _CacheLocator):
        """One folder for every environment: keyed by the sources' text, not their path."""

        def __init__(self, py_func: Any, py_file: str) -> None:
            self._py_file = py_file
            self._lineno = py_func.__code__.co_firstlineno
            self._cache_path = str(cache.cache_dir())

        def get_cache_path(self) -> str:
            return self._cache_path

        def get_source_stamp(self) -> str:
            return cache.source_digest()

    class Impl(CompileResultCacheImpl):
        _locator_classes = [UserWideLocator, *CompileResultCacheImpl._locator_classes]

    class Cache(FunctionCache):
        _impl_class = Impl

    return Cache


def cached_jit(cache: KernelCache, **options: Any) -> Callable[[Callable[..., Any]], Any]:
    """A decorator: ``njit(nogil=True, **options)`` with the disk cache of ``cache``."""
    cache_class = _cache_class(cache)

    def jit(fn: Callable[..., Any]) -> Any:
        if cache_class is not None:
            dispatcher = njit(nogil=True, **options)(fn)
            try:
                dispatcher._cache = cache_class(dispatcher.py_func)
            except RuntimeError as e:  # "cannot cache function ...: no locator available"
                _log.debug("numba cache unavailable for %s: %s", fn.__name__, e)
            return dispatcher
        try:
            return njit(cache=True, nogil=True, **options)(fn)
        except RuntimeError as e:
            _log.debug("numba cache unavailable for %s: %s", fn.__name__, e)
            return njit(cache=False, nogil=True, **options)(fn)

    return jit
