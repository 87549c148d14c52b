"""Layout families: which Arrow layouts are strings, binaries, lists (layer L1).

pyarrow names each layout apart (``is_string``, ``is_large_string``, ``is_string_view``);
the contract speaks of families (a string is held in utf8, large_utf8 or utf8_view; spec
"Representation-only types"). These predicates are the one spelling of each family. They
look at ``dt`` as given: an extension type is not a member of its storage's family, and a
dictionary is not a member of its values' family unless ``dictionary=True`` says so.

The families disagree on purpose in two places, so callers say which they mean:

* views: a data file never holds ``string_view`` / ``binary_view`` (they are input and
  output layouts), so code about data files passes ``view=False``;
* fixed-size lists: ``fixed=True`` counts ``fixed_size_list`` among the lists (it has one
  item child like the others), ``fixed=False`` only the offset lists ``list`` /
  ``large_list`` (it has no offsets and is its own semantic type).

>>> is_string_like(pa.string_view()), is_string_like(pa.string_view(), view=False)
(True, False)
>>> pairs = pa.list_(pa.int8(), 2)
>>> is_list_like(pairs, fixed=True), is_list_like(pairs, fixed=False)
(True, False)
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.types as pat

__all__ = [
    "is_string_like",
    "is_binary_like",
    "is_string_or_binary",
    "is_list_like",
    "is_large",
    "is_view",
    "is_temporal",
]


def is_string_like(dt: pa.DataType, *, view: bool = True) -> bool:
    """Whether ``dt`` is utf8, large_utf8 or (unless ``view=False``) utf8_view.

    >>> [is_string_like(t) for t in (pa.string(), pa.large_string(), pa.binary())]
    [True, True, False]
    """
    return pat.is_string(dt) or pat.is_large_string(dt) or (view and pat.is_string_view(dt))


def is_binary_like(dt: pa.DataType, *, view: bool = True) -> bool:
    """Whether ``dt`` is binary, large_binary or (unless ``view=False``) binary_view; not
    fixed_size_binary, which is its own unchanged type.

    >>> [is_binary_like(t) for t in (pa.large_binary(), pa.binary(4), pa.binary_view())]
    [True, False, True]
    """
    return pat.is_binary(dt) or pat.is_large_binary(dt) or (view and pat.is_binary_view(dt))


def is_string_or_binary(dt: pa.DataType, *, view: bool = True, dictionary: bool = False) -> bool:
    """Whether ``dt`` is a string or binary layout (:func:`is_string_like`,
    :func:`is_binary_like`); with ``dictionary``, also a dictionary of one.

    >>> small = pa.dictionary(pa.int8(), pa.string())
    >>> is_string_or_binary(small), is_string_or_binary(small, dictionary=True)
    (False, True)
    """
    if dictionary and pat.is_dictionary(dt):
        return is_string_or_binary(dt.value_type, view=view)
    return is_string_like(dt, view=view) or is_binary_like(dt, view=view)


def is_list_like(dt: pa.DataType, *, fixed: bool) -> bool:
    """Whether ``dt`` is a list or large_list or, with ``fixed``, a fixed_size_list (list
    views and maps are not: they are never stored as lists).

    >>> is_list_like(pa.large_list(pa.int8()), fixed=False)
    True
    >>> is_list_like(pa.map_(pa.int8(), pa.int8()), fixed=True)
    False
    """
    return pat.is_list(dt) or pat.is_large_list(dt) or (fixed and pat.is_fixed_size_list(dt))


def is_large(dt: pa.DataType) -> bool:
    """Whether ``dt`` is a layout with 64-bit offsets: large_utf8, large_binary, large_list.

    >>> is_large(pa.large_string()), is_large(pa.string()), is_large(pa.large_list(pa.int8()))
    (True, False, True)
    """
    return pat.is_large_string(dt) or pat.is_large_binary(dt) or pat.is_large_list(dt)


def is_view(dt: pa.DataType) -> bool:
    """Whether ``dt`` is a string or binary view (utf8_view, binary_view).

    >>> is_view(pa.binary_view()), is_view(pa.binary())
    (True, False)
    """
    return pat.is_string_view(dt) or pat.is_binary_view(dt)


def is_temporal(dt: pa.DataType) -> bool:
    """Whether ``dt`` is a date, time, timestamp, duration or interval.

    >>> is_temporal(pa.duration("s")), is_temporal(pa.int64())
    (True, False)
    """
    return (
        pat.is_date(dt)
        or pat.is_time(dt)
        or pat.is_timestamp(dt)
        or pat.is_duration(dt)
        or pat.is_interval(dt)
    )
