"""_common.py - what the package's modules share: relayout.Error, dtypes
between numpy and the library, arguments checked before ctypes takes them,
arrays in and out."""
import ctypes as C
from typing import Any, Iterable, List, Optional, Sequence, Tuple

import numpy as np

from . import _lib
from ._lib import lib


class Error(Exception):
    """A call the library refused: `status` (e.g. "RELAYOUT_ERR_DIMS") and
    `message` (what was wrong)."""

    def __init__(self, status: str, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


def _check(status: int, err: _lib.Error) -> None:
    if status:
        raise Error(lib.relayout_status_name(status).decode(),
                    err.message.decode(errors="replace"))


_NUMPY = {"bool": np.bool_, "u8": np.uint8, "i8": np.int8, "u16": np.uint16,
          "i16": np.int16, "f16": np.float16, "u32": np.uint32,
          "i32": np.int32, "f32": np.float32, "u64": np.uint64,
          "i64": np.int64, "f64": np.float64}
try:  # bf16 as ml_dtypes defines it, where installed
    import ml_dtypes
    _NUMPY["bf16"] = ml_dtypes.bfloat16
except ImportError:
    pass


def _dtype_code(name: str) -> int:
    code, err = C.c_int(), _lib.Error()
    _check(lib.relayout_dtype_from_name(C.byref(code), name.encode(), err),
           err)
    return code.value


def _dtype_of(array: np.ndarray) -> str:
    for name, t in _NUMPY.items():
        if array.dtype == np.dtype(t):
            return name
    raise Error("RELAYOUT_ERR_ARGUMENT",
                f"numpy dtype {array.dtype} has no relayout dtype (give "
                "dtype= to read its elements as one of the same width)")


def _numpy_dtype(name: str) -> np.dtype:
    if name == "bf16" and "bf16" not in _NUMPY:
        return np.dtype(np.uint16)  # the bits, without ml_dtypes
    if name not in _NUMPY:
        raise Error("RELAYOUT_ERR_UNSUPPORTED",
                    f"{name} arrays have no numpy dtype (4-bit types are "
                    "packed two to a byte): convert them with the command")
    return np.dtype(_NUMPY[name])


def _as_array(x: Any) -> Tuple[np.ndarray, Optional[str]]:
    """x as a C-contiguous numpy array (in place where it can be), and its
    dtype's name where the array's own does not say it (torch bf16)."""
    if isinstance(x, np.ndarray):
        return np.ascontiguousarray(x), None
    if str(getattr(x, "dtype", "")) == "torch.bfloat16":
        import torch
        return np.ascontiguousarray(np.from_dlpack(
            x.contiguous().view(torch.int16))).view(np.uint16), "bf16"
    if hasattr(x, "__dlpack__"):
        return np.ascontiguousarray(np.from_dlpack(x)), None
    return np.ascontiguousarray(np.asarray(x)), None


def _empty(shape: Sequence[int], dtype: np.dtype) -> np.ndarray:
    """A new array starting on a 64-byte line: where the device works in
    host memory the kernel writes it in place, at full speed only there."""
    n = int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
    buf = np.empty(n + 64, np.uint8)
    at = -buf.ctypes.data % 64
    return buf[at:at + n].view(dtype).reshape(shape)


def _int(name: str, v: Any, lo: int = -2**63, hi: int = 2**63 - 1) -> int:
    """v, an integer argument, checked to lie in [lo, hi] before ctypes
    would wrap it."""
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise TypeError(f"{name} must be an integer, not "
                        f"{type(v).__name__}")
    if not lo <= int(v) <= hi:
        raise Error("RELAYOUT_ERR_ARGUMENT",
                    f"{name}={int(v)} is out of range [{lo}, {hi}]")
    return int(v)


def _ints(name: str, values: Iterable[Any], lo: int = -2**63,
          hi: int = 2**63 - 1) -> List[int]:
    return [_int(f"{name}[{i}]", v, lo, hi) for i, v in enumerate(values)]


def _f32(name: str, v: Any) -> float:
    """v, a float argument, checked to keep its meaning as the f32 the
    library takes: no finite value that rounds to 0 or infinity."""
    f = float(v)
    with np.errstate(over="ignore", under="ignore"):
        g = np.float32(f)
    if np.isfinite(f) and ((f != 0 and g == 0) or not np.isfinite(g)):
        raise Error("RELAYOUT_ERR_ARGUMENT",
                    f"{name}={f!r} is out of f32's range (it would be "
                    f"{float(g)!r})")
    return f


def _text(name: str, v: Any) -> str:
    if not isinstance(v, str):
        raise TypeError(f"{name} must be a str, not {type(v).__name__}")
    return v


def _output(out: Optional[np.ndarray], shape: Tuple[int, ...],
            dtype: np.dtype) -> np.ndarray:
    """out, checked to be a writeable C-contiguous array of shape and
    dtype, or a new one."""
    if out is None:
        return _empty(shape, dtype)
    if not isinstance(out, np.ndarray):
        raise TypeError(f"out must be a numpy array, not "
                        f"{type(out).__name__}")
    if not out.flags.writeable:
        raise ValueError("out is read-only")
    if out.shape != shape or out.dtype != dtype or \
            not out.flags.c_contiguous:
        raise Error("RELAYOUT_ERR_ARGUMENT",
                    f"out must be a C-contiguous {shape} array of {dtype}")
    return out


def _physical_shape(desc: _lib.Desc) -> Tuple[int, ...]:
    rank = C.c_int()
    shape = (C.c_int64 * _lib.MAX_AXES)()
    lib.relayout_desc_physical_shape(C.byref(rank), shape, C.byref(desc))
    return tuple(shape[:rank.value])
