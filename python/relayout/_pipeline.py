"""_pipeline.py - preprocessing as a data pipeline's stage: a Preprocessor
is a picklable callable that maps a batch (a dict of arrays) to the model's
input, building its engine and plan on first use in each worker process
(Ray Data's map_batches, Dask's map_partitions or client.map, a torch
DataLoader's workers) and keeping them for the batches after."""
from typing import Any, Dict, Optional, Tuple

import numpy as np

from ._common import Error, _text
from ._engine import Engine
from ._preprocess import Aipp, Preprocessing


# This process's engines by the settings that made them: every copy of a
# Preprocessor that a pipeline unpickles in a worker shares one, and its
# plans (one per batch size); plans_built counts those made here.
_engines: Dict[Tuple, Engine] = {}
plans_built: Dict[Tuple, int] = {}


class Preprocessor:
    """Preprocessor(config, to="NCHW", dtype="f16", device="auto",
    frames_key="frames", output_key="input", quant_scale=None,
    quant_zero_point=None): called with a batch, a dict whose
    frames_key holds uint8 frames (an array of n frames, any shape with
    n x the configuration's frame bytes) or n encoded JPEG or PNG images
    (a list, or an object array, of bytes: decoded by the library, as
    Aipp.decode does), it returns the batch with
    output_key added: the frames preprocessed into layout `to` (one N per
    frame). It pickles as its settings alone; a worker builds the engine
    and a plan per batch size on first use and keeps them for every copy
    of the Preprocessor in that process."""

    def __init__(self, config: str, to: str = "NCHW", dtype: str = "f16",
                 device: str = "auto", frames_key: str = "frames",
                 output_key: str = "input",
                 quant_scale: Optional[float] = None,
                 quant_zero_point: Optional[int] = None):
        self._settings = dict(config=_text("config", config), to=to,
                              dtype=dtype, device=device,
                              frames_key=frames_key, output_key=output_key,
                              quant_scale=quant_scale,
                              quant_zero_point=quant_zero_point)
        self._aipp = Aipp(config)  # refused here, not in a worker
        self._key = tuple(sorted(self._settings.items()))

    def __getstate__(self) -> Dict[str, Any]:
        return self._settings

    def __setstate__(self, settings: Dict[str, Any]) -> None:
        self.__init__(**settings)  # type: ignore[misc]

    @property
    def plans_built(self) -> int:
        """Plans this process has built for these settings."""
        return plans_built.get(self._key, 0)

    def _plan(self, frames: int) -> Preprocessing:
        s = self._settings
        engine = _engines.get(self._key)
        if engine is None:
            engine = _engines[self._key] = Engine(s["device"])
        before = len(engine._plans)
        plan = engine.preprocessing(self._aipp, frames, s["to"], s["dtype"],
                                    s["quant_scale"], s["quant_zero_point"])
        if len(engine._plans) > before:
            plans_built[self._key] = self.plans_built + 1
        return plan

    def __call__(self, batch: Dict[str, Any]) -> Dict[str, Any]:
        s = self._settings
        if s["frames_key"] not in batch:
            raise Error("RELAYOUT_ERR_ARGUMENT",
                        f"the batch has no {s['frames_key']!r} "
                        f"(keys: {', '.join(map(str, batch))})")
        value = batch[s["frames_key"]]
        if isinstance(value, (list, tuple)) or (
                isinstance(value, np.ndarray) and value.dtype == object):
            value = self._aipp.decode(list(value))
        frames = np.ascontiguousarray(value)
        if frames.dtype != np.uint8:
            raise Error("RELAYOUT_ERR_ARGUMENT",
                        f"{s['frames_key']!r} holds {frames.dtype}, not "
                        "uint8 frames")
        size = self._aipp.frame_bytes
        if frames.nbytes == 0 or frames.nbytes % size:
            raise Error("RELAYOUT_ERR_ARGUMENT",
                        f"{s['frames_key']!r} holds {frames.nbytes} bytes: "
                        f"not a whole number of {size}-byte frames")
        out = dict(batch)
        out[s["output_key"]] = self._plan(frames.nbytes // size).run(frames)
        return out
