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
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple, Union

import numpy as np

from . import _command
from ._common import Error
from ._engine import Engine, Plan
from ._layout import Explained, Layout
from ._lib import lib
from ._pipeline import Preprocessor
from ._preprocess import Aipp, Preprocessing

__all__ = ["Error", "Layout", "Explained", "Engine", "Plan", "Aipp",
           "Preprocessing", "Preprocessor",
           "convert", "convert_many", "preprocess", "repack", "restore",
           "__version__"]
__version__: str = lib.relayout_version_string().decode()

_engines: Dict[str, Engine] = {}


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
