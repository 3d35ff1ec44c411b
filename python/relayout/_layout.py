"""_layout.py - relayout.Layout: layout text parsed, its logical dims, and
what it does to given extents (Explained, with its picture)."""
import ctypes as C
from typing import Dict, Sequence

from . import _lib
from ._common import _check, _dtype_code, _ints, _physical_shape, _text
from ._lib import lib


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
        elements), the base (elements before the axes' origin: a TPU
        offset), each dim's padding, array shape and bytes; a dict that
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
        "base": lib.relayout_desc_base(C.byref(desc)),
        "padding": {v.name.decode(): {"valid": v.valid, "padded": v.padded,
                                      "before": v.pad_before}
                    for v in vd[:nv] if v.padded != v.valid},
        "shape": _physical_shape(desc),
        "bytes": size.value,
    }
