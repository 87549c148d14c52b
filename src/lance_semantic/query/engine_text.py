"""Floats as text the way pylance's engine writes them (layer L3).

An update that stores a float expression in a string column goes through Arrow's Rust cast in
pylance, which formats a float32 / float64 with the shortest digits that read back as the
same value (as ``repr``) but its own layout, and a float16 through Rust's ``Display`` of the
value as a float32; pyarrow's cast writes ``1`` for 1.0 where pylance writes ``1.0``:

=========================  ==========================  =====================================
value                      float64 / float32           float16
=========================  ==========================  =====================================
1.0, -0.0                  ``1.0``, ``-0.0``           ``1``, ``-0``
1e15 / 1e16 (float64)      ``1000000000000000.0`` /    (out of range)
                           ``1e16`` (float32: from
                           1e13, ``1e13``)
1e-5 / 1e-7 (float64)      ``0.00001`` / ``1e-7``      always positional (``0.000000059604645``)
NaN, inf, -inf             ``NaN``, ``inf``, ``-inf``  the same
=========================  ==========================  =====================================

Positional below 10**16 (float64; 10**13 for float32) and from 10**-5 (float32: 10**-6),
else ``d.ddde<exp>`` without a plus sign or leading zeros.

>>> import pyarrow as pa
>>> float_text(pa.array([1.0, 2.5, 1e20, 1e-05, None, float("nan")])).to_pylist()
['1.0', '2.5', '1e20', '0.00001', None, 'NaN']
>>> float_text(pa.array([1.0, 0.1], pa.float16())).to_pylist()
['1', '0.099975586']
"""

from __future__ import annotations

import math
from collections.abc import Callable
from decimal import ROUND_HALF_UP, Decimal

import numpy as np
import pyarrow as pa

__all__ = ["float_text", "is_float_to_text"]

#: the highest decimal exponent written positionally, and the lowest exclusive (ryu's rules)
_POSITIONAL = {32: (13, -6), 64: (16, -5)}


def is_float_to_text(source: pa.DataType, target: pa.DataType) -> bool:
    """True for a float source cast to a string column (of any offset width or a view)."""
    return pa.types.is_floating(source) and (
        pa.types.is_string(target)
        or pa.types.is_large_string(target)
        or pa.types.is_string_view(target)
    )


def _digits(text: str) -> tuple[str, int]:
    """The significant digits of a shortest repr and ``kk``: value = 0.DIGITS x 10**kk."""
    _, digits, exponent = Decimal(text).normalize().as_tuple()
    assert isinstance(exponent, int)
    return "".join(map(str, digits)), len(digits) + exponent


def _layout(
    value: float, digits_of: Callable[[float], tuple[str, int]], high: float, low: float, whole: str
) -> str:
    """``value`` written positionally while its exponent ``kk`` (value = 0.DIGITS x 10**kk)
    is in ``(low, high]``, else as ``d.ddde<exp>``; a whole number ends in ``whole``."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    sign = "-" if math.copysign(1.0, value) < 0 else ""
    if value == 0:
        return sign + "0" + whole
    d, kk = digits_of(abs(value))
    n = len(d)
    if n <= kk <= high:
        return sign + d + "0" * (kk - n) + whole
    if 0 < kk <= high:
        return sign + d[:kk] + "." + d[kk:]
    if low < kk <= 0:
        return sign + "0." + "0" * -kk + d
    mantissa = d if n == 1 else d[0] + "." + d[1:]
    return f"{sign}{mantissa}e{kk - 1}"


def _ryu(value: float, bits: int) -> str:
    """Arrow's Rust cast of a float32 / float64 (the ryu crate's layout)."""
    shortest = repr if bits == 64 else (lambda v: str(np.float32(v)))
    high, low = _POSITIONAL[bits]
    return _layout(value, lambda v: _digits(shortest(v)), high, low, ".0")


def _display16(value: float) -> str:
    """Rust's ``Display`` of the float16 ``value`` taken as a float32: never an exponent."""
    digits = lambda v: _nearest_up(v, *_digits(str(np.float32(v))))  # noqa: E731
    return _layout(value, digits, math.inf, -math.inf, "")


def _nearest_up(value: float, d: str, kk: int) -> tuple[str, int]:
    """Of two shortest digit strings equally near ``value`` (numpy takes the even one), the
    upper, as Rust's float formatting does."""
    exact = Decimal(value)  # the binary value, exactly
    rounded = exact.quantize(Decimal(1).scaleb(kk - len(d)), rounding=ROUND_HALF_UP)
    if rounded != Decimal("0." + d).scaleb(kk) and np.float32(rounded) == np.float32(value):
        return _digits(str(rounded))
    return d, kk


def float_text(values: pa.Array, target: pa.DataType | None = None) -> pa.Array:
    """``values`` (float16 / float32 / float64) as ``target`` text (default ``string``), as
    pylance writes them."""
    width = values.type.bit_width
    if width == 16:
        strings = [None if v is None else _display16(float(v)) for v in values.to_pylist()]
    else:
        strings = [None if v is None else _ryu(float(v), width) for v in values.to_pylist()]
    return pa.array(strings, pa.string()).cast(target or pa.string())
