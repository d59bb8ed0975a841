"""NumPy columns and small Python lists -> Arrow arrays, built from their buffers.

Why not ``pyarrow.array``: each call asks whether pandas is installed, and where it
is (most GPU machines have it) the first call imports pandas. On the H200 machine
that import was 0.58 s of the 1.2 s from a reopen's first line to the first row of
``events``. ``Array.from_buffers`` never asks, and it hands a NumPy column's buffer
to Arrow as it is (the same memory, no copy), which is what ``pa.array`` did for
the model's columns.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import pyarrow as pa

_TYPES = {
    "int8": "int8", "int16": "int16", "int32": "int32", "int64": "int64",
    "uint8": "uint8", "uint16": "uint16", "uint32": "uint32", "uint64": "uint64",
    "float32": "float32", "float64": "float64", "bool": "bool_",
}  # fmt: skip
"""NumPy dtype name -> the ``pyarrow`` type factory of the same values."""


def _pa() -> Any:
    import pyarrow as pa  # the [sql] extra; engine.require() says how to install it

    return pa


def _validity(mask: np.ndarray | None) -> tuple[Any, int]:
    """Arrow's validity bitmap (1 = a value) for ``mask`` (True = NULL), and the NULL count."""
    if mask is None:
        return None, 0
    nulls = int(np.count_nonzero(mask))
    if not nulls:
        return None, 0
    return _pa().py_buffer(np.packbits(~np.asarray(mask, dtype=bool), bitorder="little")), nulls


def numeric(values: np.ndarray, mask: np.ndarray | None = None) -> pa.Array:
    """``values`` (a 1-D NumPy array of numbers or bools) as an Arrow array of the same
    type, NULL where ``mask`` is True.  A contiguous column is not copied."""
    pa = _pa()
    arr = np.ascontiguousarray(values)
    if arr.dtype.byteorder == ">":
        arr = arr.astype(arr.dtype.newbyteorder("="))
    kind = _TYPES.get(arr.dtype.name)
    if kind is None or arr.ndim != 1:
        raise TypeError(f"no Arrow column for a {arr.ndim}-D {arr.dtype} array")
    data = np.packbits(arr, bitorder="little") if arr.dtype == np.bool_ else arr
    validity, nulls = _validity(mask)
    return pa.Array.from_buffers(
        getattr(pa, kind)(), len(arr), [validity, pa.py_buffer(data)], null_count=nulls
    )


def of_list(values: Sequence[int | float | None], dtype: type | np.dtype) -> pa.Array:
    """A short Python list (None = NULL) as an Arrow column of ``dtype``."""
    absent = np.fromiter((v is None for v in values), dtype=bool, count=len(values))
    filled = np.array([0 if v is None else v for v in values], dtype=dtype)
    return numeric(filled, absent)


def strings(values: Sequence[str | None]) -> pa.Array:
    """Text (None = NULL) as an Arrow ``string`` array (``large_string`` past 2 GiB)."""
    pa = _pa()
    try:
        encoded = [b"" if s is None else s.encode("utf-8") for s in values]
    except UnicodeEncodeError:  # a lone surrogate: let Arrow say what it does with it
        return pa.array(list(values), type=pa.string())
    lengths = np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded))
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    large = bool(offsets[-1] >= 2**31)
    kind = pa.large_string() if large else pa.string()
    offsets = offsets if large else offsets.astype(np.int32)
    absent = np.fromiter((s is None for s in values), dtype=bool, count=len(values))
    validity, nulls = _validity(absent)
    return pa.Array.from_buffers(
        kind,
        len(encoded),
        [validity, pa.py_buffer(offsets), pa.py_buffer(b"".join(encoded))],
        null_count=nulls,
    )


def dictionary(indices: np.ndarray, values: Any, mask: np.ndarray | None = None) -> pa.Array:
    """A DictionaryArray over ``values`` (a list of text, or an Arrow string array to
    share between columns) whose index array is ``indices`` (no copy when it is
    contiguous), NULL where ``mask`` is True."""
    pa = _pa()
    if not isinstance(values, pa.Array):
        values = strings(values)
    return pa.DictionaryArray.from_arrays(numeric(indices, mask), values)
