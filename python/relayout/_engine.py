"""_engine.py - engines (a device and its compiled kernels) and the plans
they keep: conversions made once and run many times."""
import ctypes as C
import os
from collections import OrderedDict
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple, Union

import numpy as np

from . import _lib
from ._common import (Error, _as_array, _check, _dtype_code, _dtype_of,
                      _empty, _f32, _int, _ints, _numpy_dtype, _output,
                      _physical_shape, _text)
from ._layout import Layout
from ._lib import lib
from ._preprocess import Aipp, Preprocessing, _config, _frames_array


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
    generic kernel while its own builds), "specialised", "generic" or
    "cached" (the kernel the disk cache holds, else a generic one; nothing
    builds, as `relayout repack`'s first run does)."""

    _KERNELS = {"auto": 0, "specialised": 1, "generic": 2, "cached": 3}

    def __init__(self, device: str = "auto", kernels: str = "auto",
                 cache_dir: Optional[str] = None):
        if kernels not in self._KERNELS:
            raise Error("RELAYOUT_ERR_ARGUMENT",
                        f"kernels {kernels!r}: auto, specialised, generic "
                        "or cached")
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
