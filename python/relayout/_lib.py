"""_lib.py - the C library through ctypes: its types and prototypes.

The library is the librelayout.so built into this package (or, where the
environment names one, RELAYOUT_LIBRARY). ctypes releases the GIL for the
length of every call, conversions included.
"""
import ctypes as C
import os
from pathlib import Path

MAX_DIMS = 12
MAX_AXES = 24


class Error(C.Structure):
    _fields_ = [("message", C.c_char * 256)]


class Desc(C.Structure):
    _fields_ = [("opaque", C.c_uint64 * 256)]


class Axis(C.Structure):
    _fields_ = [("dim", C.c_int), ("extent", C.c_int64),
                ("weight", C.c_int64), ("stride", C.c_int64)]


class VDim(C.Structure):
    _fields_ = [("name", C.c_char), ("valid", C.c_int64),
                ("padded", C.c_int64), ("pad_before", C.c_int64)]


class DimValue(C.Structure):
    _fields_ = [("name", C.c_char), ("extent", C.c_int64)]


class Quant(C.Structure):
    _fields_ = [("scale", C.c_float), ("zero_point", C.c_int32)]


class QuantChannels(C.Structure):
    _fields_ = [("dim", C.c_char), ("count", C.c_int64),
                ("scales", C.POINTER(C.c_float)),
                ("zero_points", C.POINTER(C.c_int32))]


class EngineOptions(C.Structure):
    _fields_ = [("size", C.c_size_t), ("device", C.c_char_p),
                ("cache_dir", C.c_char_p), ("cache_bytes", C.c_int64),
                ("max_alloc", C.c_int64), ("copies", C.c_int),
                ("families", C.c_int), ("stream_bytes", C.c_int64),
                ("kernels", C.c_int), ("build_threads", C.c_int)]


class Job(C.Structure):
    _fields_ = [("plan", C.c_void_p), ("dst", C.c_void_p),
                ("dst_size", C.c_size_t), ("src", C.c_void_p),
                ("src_size", C.c_size_t)]


class Aipp(C.Structure):
    """relayout_aipp (relayout_preprocess.h), field for field."""
    _fields_ = [("input_format", C.c_int),
                ("src_image_size_w", C.c_int64),
                ("src_image_size_h", C.c_int64), ("crop", C.c_int),
                ("load_start_pos_w", C.c_int64),
                ("load_start_pos_h", C.c_int64), ("crop_size_w", C.c_int64),
                ("crop_size_h", C.c_int64), ("csc_switch", C.c_int),
                ("matrix", (C.c_int32 * 3) * 3),
                ("input_bias", C.c_int32 * 3),
                ("output_bias", C.c_int32 * 3),
                ("rbuv_swap_switch", C.c_int), ("ax_swap_switch", C.c_int),
                ("mean_chn", C.c_float * 3), ("min_chn", C.c_float * 3),
                ("var_reci_chn", C.c_float * 3), ("padding", C.c_int),
                ("left_padding_size", C.c_int64),
                ("right_padding_size", C.c_int64),
                ("top_padding_size", C.c_int64),
                ("bottom_padding_size", C.c_int64),
                ("padding_value", C.c_float)]


def _load():
    path = os.environ.get("RELAYOUT_LIBRARY") or \
        str(Path(__file__).with_name("librelayout.so"))
    return C.CDLL(path)


lib = _load()
P, I, I64, S, V = C.c_void_p, C.c_int, C.c_int64, C.c_char_p, None
PE, PD = C.POINTER(Error), C.POINTER(Desc)
_PROTOTYPES = {
    "relayout_version_string": (S, []),
    "relayout_status_name": (S, [I]),
    "relayout_dtype_from_name": (I, [C.POINTER(I), S, PE]),
    "relayout_dtype_name": (S, [I]),
    "relayout_layout_parse": (I, [C.POINTER(P), S, PE]),
    "relayout_layout_free": (V, [P]),
    "relayout_layout_text": (S, [P]),
    "relayout_layout_logical_names": (I, [C.c_char_p, C.POINTER(I),
                                          C.POINTER(I), P, PE]),
    "relayout_desc_init": (I, [PD, P, I, I, C.c_char_p, C.POINTER(I64), PE]),
    "relayout_bind": (I, [PD, PD, P, P, I, I, C.POINTER(I64),
                          C.POINTER(DimValue), I, PE]),
    "relayout_desc_retype": (I, [PD, P, I, C.POINTER(Quant), PE]),
    "relayout_desc_quantize_channels": (I, [PD, C.POINTER(QuantChannels),
                                            PE]),
    "relayout_desc_size_bytes": (I, [C.POINTER(I64), PD, PE]),
    "relayout_desc_physical_shape": (V, [C.POINTER(I), C.POINTER(I64), PD]),
    "relayout_desc_dtype": (I, [PD]),
    "relayout_desc_axes": (I, [PD, C.POINTER(Axis)]),
    "relayout_desc_base": (C.c_int64, [PD]),
    "relayout_desc_vdims": (I, [PD, C.POINTER(VDim)]),
    "relayout_desc_svg": (I, [C.c_char_p, C.POINTER(C.c_size_t), PD, S,
                              C.c_uint, PE]),
    "relayout_engine_create": (I, [C.POINTER(P), C.POINTER(EngineOptions),
                                   PE]),
    "relayout_engine_free": (V, [P]),
    "relayout_engine_device": (S, [P]),
    "relayout_plan_create": (I, [C.POINTER(P), P, PD, PD, PE]),
    "relayout_plan_free": (V, [P]),
    "relayout_plan_run": (I, [P, P, C.c_size_t, P, C.c_size_t, PE]),
    "relayout_plan_family": (S, [P]),
    "relayout_plan_kernel": (S, [P]),
    "relayout_plan_note": (S, [P]),
    "relayout_plan_wait": (I, [P, PE]),
    "relayout_plans_run": (I, [C.POINTER(Job), I, PE]),
    "relayout_aipp_parse": (I, [C.POINTER(Aipp), S, C.c_size_t, PE]),
    "relayout_aipp_defaults": (V, [C.POINTER(Aipp)]),
    "relayout_image_decode": (I, [P, C.c_size_t, C.c_char_p, C.c_size_t,
                                  C.POINTER(Aipp), PE]),
    "relayout_aipp_normalize": (I, [C.POINTER(Aipp), C.POINTER(C.c_float),
                                    C.POINTER(C.c_float), C.c_double, PE]),
    "relayout_aipp_check": (I, [C.POINTER(Aipp), C.POINTER(I64),
                                C.POINTER(I64), C.POINTER(I64),
                                C.POINTER(I64), PE]),
    "relayout_preprocess_plan_create": (I, [C.POINTER(P), P,
                                            C.POINTER(Aipp), PD, PE]),
    "relayout_preprocess_plan_free": (V, [P]),
    "relayout_preprocess_run": (I, [P, P, C.c_size_t, P, C.c_size_t, PE]),
    "relayout_preprocess_note": (S, [P]),
}
for _name, (_res, _args) in _PROTOTYPES.items():
    _f = getattr(lib, _name)
    _f.restype, _f.argtypes = _res, _args
