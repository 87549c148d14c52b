"""A library error raised in a Ray task reaches the caller as itself (layer L6).

Ray re-raises a task's exception on the driver as ``RayTaskError(<class>)``, a subclass of
both, and Ray Data may chain it under its own errors. Library errors pickle with their
attributes (``errors.LanceSemanticError.__reduce__``), so the original is there: this
module finds it and raises it, with the Ray error as its cause.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from ..errors import LanceSemanticError

__all__ = ["library_error", "library_errors_raised"]


def library_error(exc: BaseException) -> LanceSemanticError | None:
    """The first plain library error in ``exc``, its Ray ``cause`` or its chain."""
    seen: set[int] = set()
    todo: list[BaseException | None] = [exc]
    while todo:
        e = todo.pop(0)
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        if isinstance(e, LanceSemanticError) and not _is_ray_wrapper(e):
            return e
        todo.extend([getattr(e, "cause", None), e.__cause__, e.__context__])
    return None


def _is_ray_wrapper(e: BaseException) -> bool:
    return any(c.__module__.startswith("ray.") for c in type(e).__mro__[:-1])


@contextmanager
def library_errors_raised() -> Iterator[None]:
    """Re-raise a library error wrapped by Ray as the library error itself."""
    try:
        yield
    except Exception as e:
        found = library_error(e)
        if found is None or found is e:
            raise
        raise found.with_traceback(None) from e
