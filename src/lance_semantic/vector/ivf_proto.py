"""The two protobuf messages of pylance's IVF index files (layer L3): ``IVF`` and ``Tensor``.

Lance's ``protos/index.proto`` (package ``lance.index.pb``) defines them; pylance 14 writes them
into global buffers of an index's Lance files (docs/format/index-formats.md, "Files"):

- ``index.idx`` buffer 1: ``IVF`` with ``centroids_tensor`` (``[P, d]`` float32), ``loss``, and
  ``offsets`` / ``lengths`` of zeros (one per partition) for a FLAT sub-index;
- ``auxiliary.idx`` buffer 1: ``IVF`` with the partitions' ``offsets`` / ``lengths`` (rows of the
  file) and no centroids;
- ``auxiliary.idx`` buffer 2 of IVF_PQ: a ``Tensor`` codebook of shape ``[2^nbits, d]``.

Fields (numbers and types of index.proto)::

    message Tensor { DataType data_type = 1; repeated uint32 shape = 2; bytes data = 3; }
    message IVF { repeated float centroids = 1;    // deprecated
                  repeated uint64 offsets = 2; repeated uint32 lengths = 3;
                  Tensor centroids_tensor = 4; optional double loss = 5; }

Encoding follows proto3 as prost writes it (fields in number order, repeated scalars packed,
fields at their default left out, ``loss`` written whenever it is set), so that encoding a
decoded pylance buffer gives back the same bytes. Decoding also takes unpacked repeated fields
and skips unknown fields, as any proto3 reader does.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

from ..errors import CorruptTableError
from ..manifest._wire import message_fields, packed, read_varint, tag_bytes, tag_double, tag_varint

__all__ = [
    "TENSOR_DTYPES",
    "IvfMessage",
    "TensorMessage",
    "decode_ivf",
    "decode_tensor",
    "encode_ivf",
    "encode_tensor",
]

#: Tensor.DataType enum value -> numpy dtype (little-endian, as Lance writes the data buffer);
#: BFLOAT16 (0) has no numpy dtype and is kept as raw bytes
TENSOR_DTYPES: Final[dict[int, np.dtype[np.generic]]] = {
    1: np.dtype("<f2"),
    2: np.dtype("<f4"),
    3: np.dtype("<f8"),
    4: np.dtype("u1"),
    5: np.dtype("<u2"),
    6: np.dtype("<u4"),
    7: np.dtype("<u8"),
}
_BFLOAT16: Final = 0


@dataclass(frozen=True, slots=True)
class TensorMessage:
    """``lance.index.pb.Tensor``: ``data_type`` (the enum value), ``shape``, raw ``data``."""

    data_type: int
    shape: tuple[int, ...]
    data: bytes

    def to_numpy(self) -> npt.NDArray[np.generic]:
        """The tensor as a read-only numpy array of its shape (BFLOAT16 is not supported).

        >>> t = TensorMessage.from_numpy(np.arange(6, dtype=np.float32).reshape(2, 3))
        >>> t.to_numpy().tolist()
        [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
        """
        dtype = TENSOR_DTYPES.get(self.data_type)
        if dtype is None:
            raise CorruptTableError(
                "<index tensor>", f"tensor data type {self.data_type} is not supported"
            )
        count = int(np.prod(self.shape, dtype=np.int64)) if self.shape else 0
        if count * dtype.itemsize != len(self.data):
            raise CorruptTableError(
                "<index tensor>",
                f"tensor of shape {list(self.shape)} and {dtype} needs "
                f"{count * dtype.itemsize} bytes, has {len(self.data)}",
            )
        return np.frombuffer(self.data, dtype=dtype).reshape(self.shape)

    @classmethod
    def from_numpy(cls, array: npt.NDArray[np.generic]) -> TensorMessage:
        """The tensor of ``array`` (float16/32/64 or uint8/16/32/64), in C order."""
        dtype = np.dtype(array.dtype).newbyteorder("<")
        for code, known in TENSOR_DTYPES.items():
            if known == dtype:
                data = np.ascontiguousarray(array, dtype=known).tobytes()
                return cls(code, tuple(int(s) for s in array.shape), data)
        raise TypeError(f"array: a tensor cannot hold dtype {array.dtype}")


@dataclass(frozen=True, slots=True)
class IvfMessage:
    """``lance.index.pb.IVF``: deprecated flat ``centroids``, per-partition ``offsets`` and
    ``lengths``, the ``centroids_tensor`` and the k-means ``loss`` (None when not set)."""

    centroids: tuple[float, ...] = ()
    offsets: tuple[int, ...] = ()
    lengths: tuple[int, ...] = ()
    centroids_tensor: TensorMessage | None = None
    loss: float | None = None

    @property
    def num_partitions(self) -> int:
        """The number of partitions: of ``lengths``, else of the centroids' first axis."""
        if self.lengths:
            return len(self.lengths)
        if self.centroids_tensor is not None and self.centroids_tensor.shape:
            return self.centroids_tensor.shape[0]
        return 0


# ---- encoding ---------------------------------------------------------------------------------


def _packed_varints(number: int, values: tuple[int, ...]) -> bytes:
    """A packed repeated field, left out when empty (as protobuf writes proto3 fields)."""
    return packed(number, values) if values else b""


def encode_tensor(tensor: TensorMessage) -> bytes:
    """The serialized ``Tensor`` message.

    >>> encode_tensor(TensorMessage(2, (1, 2), bytes(8))).hex()
    '0802120201021a080000000000000000'
    """
    out = tag_varint(1, tensor.data_type) if tensor.data_type else b""
    out += _packed_varints(2, tensor.shape)
    if tensor.data:
        out += tag_bytes(3, tensor.data)
    return out


def encode_ivf(ivf: IvfMessage) -> bytes:
    """The serialized ``IVF`` message.

    >>> encode_ivf(IvfMessage(offsets=(0, 3), lengths=(3, 2))).hex()
    '120200031a020302'
    """
    out = b""
    if ivf.centroids:
        out += tag_bytes(1, struct.pack(f"<{len(ivf.centroids)}f", *ivf.centroids))
    out += _packed_varints(2, ivf.offsets)
    out += _packed_varints(3, ivf.lengths)
    if ivf.centroids_tensor is not None:
        out += tag_bytes(4, encode_tensor(ivf.centroids_tensor))
    if ivf.loss is not None:
        out += tag_double(5, ivf.loss)
    return out


# ---- decoding ---------------------------------------------------------------------------------


def _bad(what: str, e: Exception) -> CorruptTableError:
    return CorruptTableError("<index global buffer>", f"not a valid {what} message: {e}")


def _varints_of(wire: int, value: int | bytes) -> list[int]:
    """The values of one occurrence of a repeated varint field (packed or not)."""
    if wire == 0:
        assert isinstance(value, int)
        return [value]
    if wire != 2 or not isinstance(value, bytes):
        raise ValueError(f"wire type {wire} for a repeated varint field")
    out, pos = [], 0
    while pos < len(value):
        item, pos = read_varint(value, pos)
        out.append(item)
    return out


def decode_tensor(data: bytes) -> TensorMessage:
    """The ``Tensor`` message serialized in ``data``.

    >>> decode_tensor(bytes.fromhex("0802120201021a080000000000000000"))
    TensorMessage(data_type=2, shape=(1, 2), data=b'\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00')
    """
    data_type, shape, payload = 0, [], b""
    try:
        for number, wire, value in message_fields(bytes(data)):
            if number == 1 and wire == 0:
                assert isinstance(value, int)
                data_type = value
            elif number == 2:
                shape.extend(_varints_of(wire, value))
            elif number == 3 and wire == 2:
                assert isinstance(value, bytes)
                payload = value
    except ValueError as e:
        raise _bad("Tensor", e) from e
    return TensorMessage(data_type, tuple(shape), payload)


def decode_ivf(data: bytes) -> IvfMessage:
    """The ``IVF`` message serialized in ``data``.

    >>> decode_ivf(bytes.fromhex("120200031a020302"))
    IvfMessage(centroids=(), offsets=(0, 3), lengths=(3, 2), centroids_tensor=None, loss=None)
    """
    centroids: list[float] = []
    offsets: list[int] = []
    lengths: list[int] = []
    tensor: TensorMessage | None = None
    loss: float | None = None
    try:
        for number, wire, value in message_fields(bytes(data)):
            if number == 1 and isinstance(value, bytes) and wire in (2, 5):
                if len(value) % 4:
                    raise ValueError("packed floats of a length not a multiple of 4")
                centroids.extend(struct.unpack(f"<{len(value) // 4}f", value))
            elif number == 2:
                offsets.extend(_varints_of(wire, value))
            elif number == 3:
                lengths.extend(_varints_of(wire, value))
            elif number == 4 and wire == 2 and isinstance(value, bytes):
                tensor = decode_tensor(value)
            elif number == 5 and wire == 1 and isinstance(value, bytes):
                (loss,) = struct.unpack("<d", value)
    except ValueError as e:
        raise _bad("IVF", e) from e
    return IvfMessage(tuple(centroids), tuple(offsets), tuple(lengths), tensor, loss)
