"""relayout: tensor layout conversion on OpenCL devices, from Python.

    import numpy as np, relayout
    x = np.arange(2 * 17 * 5 * 3, dtype=np.float16).reshape(2, 17, 5, 3)
    y = relayout.convert(x, "NCHW", "NC1HWC0")          # shape (2, 2, 5, 3, 16)
    back = relayout.convert(y, "NC1HWC0", "NCHW", dims={"C": 17})

Arrays are numpy arrays, or anything with __dlpack__ (PyTorch CPU tensors),
read in place where they are C-contiguous. Results are new numpy arrays in
the destination layout's physical shape. Layouts are the text the command
takes: named formats, grammar, CuTe layouts (docs/LAYOUTS.md). Errors raise
relayout.Error with the library's message. repack and restore convert
safetensors files through the relayout command built into the package.
preprocess runs frames (uint8 arrays) through an Ascend AIPP configuration
into a model's input layout (docs/PREPROCESS.md):

    cfg = open("model_aipp.cfg").read()   # aipp_op { input_format: ... }
    x = relayout.preprocess(nv12_frames, cfg, to="NC1HWC0", dtype="f16")
"""
from collections import OrderedDict
import ctypes as C
import os
from typing import (Any, Dict, Iterable, List, Optional, Sequence, Tuple,
                    Union)

import numpy as np

from . import _command, _lib
from ._lib import lib

__all__ = ["Error", "Layout", "Explained", "Engine", "Plan", "Aipp",
           "Preprocessing",
           "convert", "convert_many", "preprocess", "repack", "restore",
           "__version__"]
__version__: str = lib.relayout_version_string().decode()


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


class Layout:
    """A parsed layout: `Layout("NC1HWC0")`, `Layout("nChw16c")`,
    `Layout("((4,2),(4,3)):((4,16),(1,32))")`."""

    def __init__(self, text: str):
        self._handle = C.c_void_p()
        err = _lib.Error()
        _check(lib.relayout_layout_parse(C.byref(self._handle),
                                         _text("layout", text).encode(), err),
               err)

    def __del__(self) -> None:
        if getattr(self, "_handle", None):
            lib.relayout_layout_free(self._handle)
            self._handle = None

    @property
    def text(self) -> str:
        return lib.relayout_layout_text(self._handle).decode()

    def logical_names(self) -> str:
        """The logical dim letters in order ("NCHW"); "" for positional
        layouts (ND, CuTe), which take the other side's."""
        out = C.create_string_buffer(_lib.MAX_DIMS + 1)
        batch, positional, err = C.c_int(), C.c_int(), _lib.Error()
        _check(lib.relayout_layout_logical_names(
            out, C.byref(batch), C.byref(positional), self._handle, err), err)
        return out.value.decode()

    def explain(self, shape: Sequence[int], dtype: str = "f32"
                ) -> "Explained":
        """The layout bound to logical extents (in logical order): its dims,
        physical axes (outermost first: dim, extent, weight, stride in
        elements), each dim's padding, array shape and bytes; a dict that
        Jupyter shows as the picture of the buffer (Explained.svg)."""
        names = self.logical_names() or "".join(
            chr(ord("0") + i) for i in range(len(shape)))
        desc = _lib.Desc()
        err = _lib.Error()
        dims = (C.c_int64 * len(shape))(*_ints("shape", shape))
        _check(lib.relayout_desc_init(C.byref(desc), self._handle,
                                      _dtype_code(dtype), len(shape),
                                      names.encode(), dims, err), err)
        return Explained(_describe(desc), desc, self.text)

    def __repr__(self) -> str:
        return f"Layout({self.text!r})"


class Explained(dict):
    """Layout.explain's description (a dict), with the picture of the
    buffer: svg() (values=True labels cells with the logical index instead
    of the coordinate), shown by Jupyter."""

    def __init__(self, description: Dict, desc: _lib.Desc, title: str):
        super().__init__(description)
        self._desc, self._title = desc, title

    def svg(self, values: bool = False) -> str:
        """The buffer drawn as SVG text: a cell per element in physical
        order labelled with its logical coordinate, padding shaded, blocks
        outlined (relayout_desc_svg)."""
        size, err = C.c_size_t(0), _lib.Error()
        args = (C.byref(self._desc), self._title.encode(), int(values), err)
        _check(lib.relayout_desc_svg(None, C.byref(size), *args), err)
        out = C.create_string_buffer(size.value)
        _check(lib.relayout_desc_svg(out, C.byref(size), *args), err)
        return out.value.decode()

    def _repr_svg_(self) -> str:
        return self.svg()


def _describe(desc: _lib.Desc) -> Dict:
    vd = (_lib.VDim * (_lib.MAX_DIMS + 1))()
    nv = lib.relayout_desc_vdims(C.byref(desc), vd)
    axes = (_lib.Axis * _lib.MAX_AXES)()
    na = lib.relayout_desc_axes(C.byref(desc), axes)
    label = [v.name.decode() for v in vd[:nv]]
    size = C.c_int64()
    lib.relayout_desc_size_bytes(C.byref(size), C.byref(desc), None)
    return {
        "dtype": lib.relayout_dtype_name(
            lib.relayout_desc_dtype(C.byref(desc))).decode(),
        "dims": {v.name.decode(): v.valid for v in vd[:nv]},
        "axes": [{"dim": label[a.dim], "extent": a.extent,
                  "weight": a.weight, "stride": a.stride}
                 for a in axes[:na]],
        "padding": {v.name.decode(): {"valid": v.valid, "padded": v.padded,
                                      "before": v.pad_before}
                    for v in vd[:nv] if v.padded != v.valid},
        "shape": _physical_shape(desc),
        "bytes": size.value,
    }


def _physical_shape(desc: _lib.Desc) -> Tuple[int, ...]:
    rank = C.c_int()
    shape = (C.c_int64 * _lib.MAX_AXES)()
    lib.relayout_desc_physical_shape(C.byref(rank), shape, C.byref(desc))
    return tuple(shape[:rank.value])


def _default_cache() -> Optional[str]:
    """RELAYOUT_CACHE_DIR ("off": none), else ~/.cache/relayout: where the
    command keeps compiled kernels too."""
    d = os.environ.get("RELAYOUT_CACHE_DIR")
    if d == "off":
        return None
    return d or os.path.join(os.path.expanduser("~"), ".cache", "relayout")


class Engine:
    """A device and its compiled kernels: "auto" (the first GPU, else a CPU
    device, else the reference), "gpu", "cpu", "ref", an index or part of a
    device name. kernels: "auto" (a new conversion runs at once on a
    generic kernel while its own builds), "specialised" or "generic"."""

    _KERNELS = {"auto": 0, "specialised": 1, "generic": 2}

    def __init__(self, device: str = "auto", kernels: str = "auto",
                 cache_dir: Optional[str] = None):
        if kernels not in self._KERNELS:
            raise Error("RELAYOUT_ERR_ARGUMENT",
                        f"kernels {kernels!r}: auto, specialised or generic")
        self._cache = (cache_dir or _default_cache() or "").encode() or None
        o = _lib.EngineOptions(size=C.sizeof(_lib.EngineOptions),
                               device=device.encode(), cache_dir=self._cache,
                               kernels=self._KERNELS[kernels])
        self._handle = C.c_void_p()
        err = _lib.Error()
        _check(lib.relayout_engine_create(C.byref(self._handle), C.byref(o),
                                          err), err)
        self._plans: "OrderedDict[tuple, Any]" = OrderedDict()

    def __del__(self) -> None:
        if getattr(self, "_handle", None):
            self._plans.clear()
            lib.relayout_engine_free(self._handle)
            self._handle = None

    @property
    def device(self) -> str:
        return lib.relayout_engine_device(self._handle).decode()

    def plan(self, src: str, dst: str, shape: Sequence[int],
             dtype: str = "f32", dims: Optional[Dict[str, int]] = None,
             to_dtype: Optional[str] = None, scale: Any = None,
             zero_point: Any = None,
             from_scale: Any = None,
             from_zero_point: Any = None,
             axis: Optional[str] = None) -> "Plan":
        """A conversion of arrays of `shape` (src's physical shape) and
        dtype, made once and run many times; dims gives extents padding
        hides ({"C": 17}); to_dtype, scale and zero_point cast
        (docs/CASTS.md), from_scale and from_zero_point quantize the
        source. A scale or zero point given as an array is per channel
        along logical dim `axis` (a letter, or an ND dim's index)."""
        quant = tuple(_quant_key(v) for v in
                      (scale, zero_point, from_scale, from_zero_point))
        key = (src, dst, tuple(shape), dtype, tuple(sorted((dims or {})
                                                           .items())),
               to_dtype, quant, axis)
        return self._kept(key, lambda: Plan(
            self, src, dst, shape, dtype, dims, to_dtype, (scale, zero_point),
            (from_scale, from_zero_point), axis))

    def _kept(self, key: tuple, make: Any) -> Any:
        """The plan kept under key, else make()'s, kept: the 64 last used."""
        plan = self._plans.get(key)
        if plan is None:
            plan = self._plans[key] = make()
            if len(self._plans) > 64:
                self._plans.popitem(last=False)
        else:
            self._plans.move_to_end(key)
        return plan

    def convert(self, x: Any, src: str, dst: str,
                dims: Optional[Dict[str, int]] = None,
                dtype: Optional[str] = None, **cast: Any) -> np.ndarray:
        """x (in src's physical shape) converted to dst: see
        relayout.convert."""
        a, t = _as_array(x)
        t = dtype or t or _dtype_of(a)
        return self.plan(src, dst, a.shape, t, dims, **cast).run(a)

    def convert_many(self, items: Iterable[Tuple[Any, str, str]],
                     **options: Any) -> List[np.ndarray]:
        """Each (x, src, dst) converted, all enqueued back to back and
        waited for once (relayout_plans_run); options as convert's."""
        jobs, outs, keep = [], [], []
        dtype = options.pop("dtype", None)
        for x, src, dst in items:
            a, t = _as_array(x)
            plan = self.plan(src, dst, a.shape, dtype or t or _dtype_of(a),
                             **options)
            out = _empty(plan.dst_shape, plan.dst_dtype)
            plan._check_input(a)
            jobs.append(_lib.Job(plan._handle, out.ctypes.data, out.nbytes,
                                 a.ctypes.data, a.nbytes))
            outs.append(out)
            keep.append((a, plan))
        if jobs:
            err = _lib.Error()
            _check(lib.relayout_plans_run((_lib.Job * len(jobs))(*jobs),
                                          len(jobs), err), err)
        return outs


    def preprocessing(self, config: "Union[str, Aipp]", frames: int,
                      to: str = "NCHW", dtype: str = "f16",
                      quant_scale: Optional[float] = None,
                      quant_zero_point: Optional[int] = None
                      ) -> "Preprocessing":
        """config's preprocessing of `frames` frames a batch, made once
        and kept (see Preprocessing)."""
        aipp = _config(config)
        key = ("preprocess", aipp._key(), frames, to, dtype, quant_scale,
               quant_zero_point)
        return self._kept(key, lambda: Preprocessing(
            self, aipp, frames, to, dtype, quant_scale, quant_zero_point))

    def preprocess(self, frames: Any, config: "Union[str, Aipp]",
                   to: str = "NCHW", dtype: str = "f16",
                   **quant: Any) -> np.ndarray:
        """frames through config into `to`: see relayout.preprocess."""
        a, aipp = _frames_array(frames), _config(config)
        frame = aipp.frame_bytes
        if a.nbytes == 0 or a.nbytes % frame:
            raise Error("RELAYOUT_ERR_ARGUMENT",
                        f"{a.nbytes} bytes of frames: not a whole number of "
                        f"the configuration's {frame}-byte frames")
        return self.preprocessing(aipp, a.nbytes // frame, to, dtype,
                                  **quant).run(a)


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

    def __init__(self, engine: Engine, config: "Union[str, Aipp]",
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


class Plan:
    """One conversion on one engine (Engine.plan): src_shape, src_dtype
    -> dst_shape, dst_dtype; family, kernel and note as the library says."""

    def __init__(self, engine: Engine, src: str, dst: str,
                 shape: Sequence[int], dtype: str,
                 dims: Optional[Dict[str, int]], to_dtype: Optional[str],
                 quant: Tuple, from_quant: Tuple, axis: Optional[str] = None):
        self._engine = engine  # outlives the plan
        a, b = Layout(src), Layout(dst)
        s, d, err = _lib.Desc(), _lib.Desc(), _lib.Error()
        given = [(_text("dims' key", k), _int(f"dims[{k!r}]", v))
                 for k, v in (dims or {}).items()]
        gv = (_lib.DimValue * max(len(given), 1))(
            *[_lib.DimValue(k.encode(), v) for k, v in given])
        sh = (C.c_int64 * len(shape))(*_ints("shape", shape))
        code = _dtype_code(dtype)
        _check(lib.relayout_bind(C.byref(s), C.byref(d), a._handle, b._handle,
                                 code, len(shape), sh, gv, len(given), err),
               err)
        self._channels = []  # per-channel arrays: the descriptors' own
        has_from = any(v is not None for v in from_quant)
        has_to = any(v is not None for v in quant)
        if has_from:
            q = _lib.Quant(*_scalar_quant(from_quant, "from_"))
            _check(lib.relayout_desc_retype(C.byref(s), a._handle, code,
                                            C.byref(q), err), err)
            self._per_channel(s, from_quant, axis)
        if to_dtype or has_to:
            q = _lib.Quant(*_scalar_quant(quant))
            _check(lib.relayout_desc_retype(
                C.byref(d), b._handle, _dtype_code(to_dtype or dtype),
                C.byref(q) if has_to else None, err), err)
            self._per_channel(d, quant, axis)
        if axis is not None and not self._channels:
            raise Error("EXIT_USAGE", "axis names the dim of per-channel "
                        "scales or zero points (arrays); none is given")
        self.src_shape = tuple(shape)
        self.dst_shape = _physical_shape(d)
        self.src_dtype = _numpy_dtype(dtype)
        self.dst_dtype = _numpy_dtype(lib.relayout_dtype_name(
            lib.relayout_desc_dtype(C.byref(d))).decode())
        self._src, self._dst = s, d
        self._handle = C.c_void_p()
        _check(lib.relayout_plan_create(C.byref(self._handle),
                                        engine._handle, C.byref(d),
                                        C.byref(s), err), err)

    def _per_channel(self, desc: _lib.Desc, quant: Tuple,
                     axis: Optional[str]) -> None:
        """The side's per-channel quantization, where its scale or zero
        point is an array: one value per position of `axis`."""
        scale, zero = (np.asarray(v) if v is not None else None
                       for v in quant)
        if all(v is None or v.ndim == 0 for v in (scale, zero)):
            return
        if axis is None:
            raise Error("EXIT_USAGE", "per-channel scales or zero points "
                        "need axis, the logical dim they run along")
        n = max(v.size for v in (scale, zero) if v is not None and v.ndim)
        sc = np.ascontiguousarray(np.broadcast_to(
            np.float32(1) if scale is None else scale, (n,)), np.float32)
        zp = np.ascontiguousarray(np.broadcast_to(
            0 if zero is None else zero, (n,)), np.int32)
        if scale is not None and not np.array_equal(sc, scale):
            raise Error("EXIT_USAGE", "per-channel scales must be f32 values")
        if zero is not None and not np.array_equal(zp, zero):
            raise Error("EXIT_USAGE", "per-channel zero points must be "
                        "int32 values")
        name = str(axis).upper() if not str(axis).isdigit() else \
            chr(ord("0") + int(axis))
        qc = _lib.QuantChannels(name.encode(), n,
                                sc.ctypes.data_as(C.POINTER(C.c_float)),
                                zp.ctypes.data_as(C.POINTER(C.c_int32)))
        err = _lib.Error()
        _check(lib.relayout_desc_quantize_channels(C.byref(desc),
                                                   C.byref(qc), err), err)
        self._channels += [sc, zp]

    def __del__(self) -> None:
        if getattr(self, "_handle", None):
            lib.relayout_plan_free(self._handle)
            self._handle = None

    family = property(lambda self: lib.relayout_plan_family(
        self._handle).decode())
    kernel = property(lambda self: lib.relayout_plan_kernel(
        self._handle).decode())
    note = property(lambda self: lib.relayout_plan_note(
        self._handle).decode())

    def wait(self) -> None:
        """Waits for the plan's own kernel (it runs a generic one until)."""
        err = _lib.Error()
        _check(lib.relayout_plan_wait(self._handle, err), err)

    def _check_input(self, a: np.ndarray) -> None:
        if a.shape != self.src_shape or a.dtype.itemsize != \
                self.src_dtype.itemsize:
            raise Error("RELAYOUT_ERR_ARGUMENT",
                        f"the plan takes {self.src_shape} arrays of "
                        f"{self.src_dtype}; this one is {a.shape} "
                        f"{a.dtype}")

    def run(self, x: Any, out: Optional[np.ndarray] = None) -> np.ndarray:
        """x converted, into out (a C-contiguous array of dst_shape and
        dst_dtype) or a new array."""
        a, _ = _as_array(x)
        self._check_input(a)
        out = _output(out, self.dst_shape, self.dst_dtype)
        err = _lib.Error()
        _check(lib.relayout_plan_run(self._handle, out.ctypes.data,
                                     out.nbytes, a.ctypes.data, a.nbytes,
                                     err), err)
        return out


_engines: Dict[str, Engine] = {}


def _quant_key(v: Any) -> Any:
    """A scale or zero point as a plan's cache key: arrays by value."""
    a = np.asarray(v) if v is not None else None
    return v if a is None or a.ndim == 0 else (a.dtype.str, a.tobytes())


def _scalar_quant(quant: Tuple, side: str = "") -> Tuple[float, int]:
    """A side's per-tensor (scale, zero point), its arguments' names
    prefixed by side: where one is an array, the per-channel values replace
    it after."""
    scale, zero = quant
    return (1.0 if scale is None or np.ndim(scale) else
            _f32(side + "scale", scale),
            0 if zero is None or np.ndim(zero) else
            _int(side + "zero_point", zero, -2**31, 2**31 - 1))


def _engine(device: str) -> Engine:
    if device not in _engines:
        _engines[device] = Engine(device)
    return _engines[device]


def convert(x: Any, src: str, dst: str, device: str = "auto",
            dims: Optional[Dict[str, int]] = None,
            dtype: Optional[str] = None, to_dtype: Optional[str] = None,
            scale: Any = None, zero_point: Any = None,
            from_scale: Any = None,
            from_zero_point: Any = None,
            axis: Optional[str] = None) -> np.ndarray:
    """x, stored in src's physical shape, converted to dst's: a new numpy
    array. dims: extents that src's padding hides ({"C": 17}); dtype: read
    x's elements as this relayout dtype (same width; "bf16" for uint16
    bits); to_dtype, scale, zero_point: cast (docs/CASTS.md);
    from_scale, from_zero_point: x's quantization; a scale or zero point
    given as an array is per channel along logical dim `axis` ("N", or an
    ND dim's index). The engine of `device` and the plan are kept for the
    next call of the same kind."""
    return _engine(device).convert(
        x, src, dst, dims, dtype, to_dtype=to_dtype, scale=scale,
        zero_point=zero_point, from_scale=from_scale,
        from_zero_point=from_zero_point, axis=axis)


def convert_many(items: Iterable[Tuple[Any, str, str]], device: str = "auto",
                 **options: Any) -> List[np.ndarray]:
    """Each (x, src, dst) converted as convert would, in one batch."""
    return _engine(device).convert_many(items, **options)


def preprocess(frames: Any, config: "Union[str, Aipp]", to: str = "NCHW",
               dtype: str = "f16", device: str = "auto",
               quant_scale: Optional[float] = None,
               quant_zero_point: Optional[int] = None) -> np.ndarray:
    """frames (a uint8 array holding whole frames back to back: NV12's Y
    then UV plane, RGB888, XRGB8888 or gray, at the configuration's size)
    through AIPP configuration config (an Aipp, or its text;
    docs/PREPROCESS.md: crop, colour-space conversion, swaps,
    normalization in f32, padding) into layout `to`, one N per frame: a
    new array of its physical shape. dtype f16, bf16, f32, f64, or i8/u8
    quantized by quant_scale (default 1) and quant_zero_point (default
    0). The engine and the plan are kept for the next call of
    the same kind."""
    return _engine(device).preprocess(
        frames, config, to, dtype, quant_scale=quant_scale,
        quant_zero_point=quant_zero_point)


def repack(src: "_command.PathLike", dst: "_command.PathLike",
           rules: Sequence[str], device: str = "auto",
           max_memory: Optional[str] = None,
           wait_compile: bool = False) -> Dict:
    """The tensors of safetensors file (or sharded directory) src, repacked
    into dst by rules ("GLOB[:Nd][:FROM]=TO[:DTYPE[:per-channel=X]]", the
    first match wins,
    as `relayout repack --rule` takes them); every converted tensor's
    layouts and dtypes recorded in dst's __metadata__ for restore. Returns
    the command's summary (per tensor: name, shapes, dtypes, layouts).
    Errors raise Error with the command's message, status "EXIT_USAGE" (a
    rule or layout was wrong) or "EXIT_WORK" (files, devices)."""
    return _command.repack(src, dst, rules, device=device,
                           max_memory=max_memory, wait_compile=wait_compile,
                           error=Error)


def restore(src: "_command.PathLike", dst: "_command.PathLike",
            device: str = "auto") -> Dict:
    """A file repack wrote, converted back: each tensor as it was (a cast
    one exactly where it was widened, else at its stored precision)."""
    return _command.restore(src, dst, device=device, error=Error)
