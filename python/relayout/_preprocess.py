"""_preprocess.py - preprocessing: an AIPP configuration (Aipp) and its plan
on an engine (Preprocessing), frames in, a model's input out."""
import ctypes as C
from typing import TYPE_CHECKING, Any, Optional, Sequence, Union

import numpy as np

from . import _lib
from ._common import (Error, _as_array, _check, _dtype_code, _f32, _int,
                      _numpy_dtype, _output, _physical_shape, _text)
from ._layout import Layout
from ._lib import lib

if TYPE_CHECKING:
    from ._engine import Engine


class Aipp:
    """An AIPP configuration (docs/PREPROCESS.md): Aipp(text) parses CANN's
    `aipp_op { key : value ... }` text; Aipp.normalize(...) is the common
    (x * scale - mean) / std without one. channels, height, width: the
    output's; frame_bytes: a frame's."""

    FORMATS = ("YUV420SP_U8", "RGB888_U8", "XRGB8888_U8", "YUV400_U8")

    def __init__(self, text: str):
        self._c, err = _lib.Aipp(), _lib.Error()
        b = _text("config", text).encode()
        _check(lib.relayout_aipp_parse(C.byref(self._c), b, len(b), err), err)
        self._checked()

    @classmethod
    def normalize(cls, input_format: str, width: int, height: int,
                  mean: Sequence[float] = (0, 0, 0),
                  std: Sequence[float] = (1, 1, 1),
                  scale: float = 1.0) -> "Aipp":
        """Frames of input_format (one of FORMATS) and size, normalized as
        (x * scale - mean) / std per channel (torchvision's Normalize after
        ToTensor: scale=1/255), in AIPP's arithmetic (within an f32
        rounding or two of the formula)."""
        if input_format not in cls.FORMATS:
            raise Error("RELAYOUT_ERR_ARGUMENT",
                        f"input_format {input_format!r}: one of "
                        f"{', '.join(cls.FORMATS)}")
        a, err = cls.__new__(cls), _lib.Error()
        a._c = _lib.Aipp()
        lib.relayout_aipp_defaults(C.byref(a._c))
        a._c.input_format = cls.FORMATS.index(input_format)
        a._c.src_image_size_w = _int("width", width)
        a._c.src_image_size_h = _int("height", height)
        m, s = ((C.c_float * 3)(*(_f32(f"{n}[{i}]", x)
                                  for i, x in enumerate(v)))
                for n, v in (("mean", mean), ("std", std)))
        _check(lib.relayout_aipp_normalize(C.byref(a._c), m, s,
                                           _f32("scale", scale), err), err)
        a._checked()
        return a

    def _checked(self) -> None:
        out, err = [C.c_int64() for _ in range(4)], _lib.Error()
        _check(lib.relayout_aipp_check(C.byref(self._c),
                                       *[C.byref(v) for v in out], err), err)
        self.channels, self.height, self.width, self.frame_bytes = \
            (v.value for v in out)

    def _key(self) -> bytes:
        return bytes(self._c)

    def decode(self, images: Sequence[bytes]) -> np.ndarray:
        """JPEG or PNG files held in memory (bytes each) decoded into
        frames of this configuration's input format and size (the
        library's decoders, relayout_image_decode): a uint8 array of
        len(images) x frame_bytes. An image of another size, damaged or of
        neither kind fails, naming its index."""
        out = np.empty((len(images), self.frame_bytes), np.uint8)
        for i, image in enumerate(images):
            if not isinstance(image, (bytes, bytearray, memoryview)):
                raise TypeError(f"images[{i}] must be bytes, not "
                                f"{type(image).__name__}")
            b, err = bytes(image), _lib.Error()
            status = lib.relayout_image_decode(
                out[i].ctypes.data, self.frame_bytes, b, len(b),
                C.byref(self._c), err)
            if status:
                raise Error(lib.relayout_status_name(status).decode(),
                            f"images[{i}]: {err.message.decode()}")
        return out


def _config(config: "Union[str, Aipp]") -> Aipp:
    if isinstance(config, Aipp):
        return config
    if not isinstance(config, str):
        raise TypeError(f"config must be an Aipp or its text (str), not "
                        f"{type(config).__name__}")
    return Aipp(config)


def _frames_array(frames: Any) -> np.ndarray:
    a, _ = _as_array(frames)
    if a.dtype != np.uint8:
        raise Error("RELAYOUT_ERR_ARGUMENT",
                    f"frames are uint8 arrays, not {a.dtype}")
    return a


class Preprocessing:
    """An AIPP configuration (an Aipp, or CANN's `aipp_op { key : value
    ... }` text, docs/PREPROCESS.md) compiled on an engine for `frames`
    frames at a time into layout `to` (logical dims N, C, H, W: NCHW, NHWC,
    NC1HWC0, nChw16c, NCHW4, ...) and dtype (f16, bf16, f32, f64; i8 or u8
    quantized by quant_scale, default 1, and quant_zero_point, default 0,
    which a float dtype refuses); run takes the frames back to back
    as a uint8 array (any shape) and gives the output in its physical
    shape, the same bits as the reference. note: why it runs on the
    reference, if it does."""

    def __init__(self, engine: "Engine", config: "Union[str, Aipp]",
                 frames: int, to: str = "NCHW", dtype: str = "f16",
                 quant_scale: Optional[float] = None,
                 quant_zero_point: Optional[int] = None):
        self._engine = engine  # outlives the plan
        self._aipp = _config(config)
        c, h, w, frame = (self._aipp.channels, self._aipp.height,
                          self._aipp.width, self._aipp.frame_bytes)
        if dtype not in ("i8", "u8") and (quant_scale is not None or
                                          quant_zero_point is not None):
            raise Error("RELAYOUT_ERR_ARGUMENT",
                        "quant_scale and quant_zero_point quantize an i8 or "
                        f"u8 dtype, not {dtype}")
        layout, d, err = Layout(to), _lib.Desc(), _lib.Error()
        code = _dtype_code(dtype)
        dims = (C.c_int64 * 4)(_int("frames", frames, 1), c, h, w)
        _check(lib.relayout_desc_init(C.byref(d), layout._handle, code, 4,
                                      b"NCHW", dims, err), err)
        if dtype in ("i8", "u8"):
            q = _lib.Quant(
                1.0 if quant_scale is None else _f32("quant_scale",
                                                     quant_scale),
                _int("quant_zero_point", quant_zero_point or 0, -2**31,
                     2**31 - 1))
            _check(lib.relayout_desc_retype(C.byref(d), layout._handle, code,
                                            C.byref(q), err), err)
        self.frames, self.frame_bytes = frames, frame
        self.dst_shape = _physical_shape(d)
        self.dst_dtype = _numpy_dtype(dtype)
        self._dst = d
        self._handle = C.c_void_p()
        _check(lib.relayout_preprocess_plan_create(
            C.byref(self._handle), engine._handle, C.byref(self._aipp._c),
            C.byref(d), err), err)

    def __del__(self) -> None:
        if getattr(self, "_handle", None):
            lib.relayout_preprocess_plan_free(self._handle)
            self._handle = None

    note = property(lambda self: lib.relayout_preprocess_note(
        self._handle).decode())

    def run(self, frames: Any, out: Optional[np.ndarray] = None) -> np.ndarray:
        """The frames (uint8, `frames` x frame_bytes bytes) preprocessed,
        into out (C-contiguous, dst_shape and dst_dtype) or a new array."""
        a = _frames_array(frames)
        if a.nbytes != self.frames * self.frame_bytes:
            raise Error("RELAYOUT_ERR_ARGUMENT",
                        f"the plan takes {self.frames} frames of "
                        f"{self.frame_bytes} bytes; this array holds "
                        f"{a.nbytes} bytes")
        out = _output(out, self.dst_shape, self.dst_dtype)
        err = _lib.Error()
        _check(lib.relayout_preprocess_run(self._handle, out.ctypes.data,
                                           out.nbytes, a.ctypes.data,
                                           a.nbytes, err), err)
        return out
