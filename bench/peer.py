"""peer.py - numpy or PyTorch doing one relayout conversion, or numpy or
OpenCV one preprocessing (bench --suite)

Embedded in the relayout binary, which runs it as
    PYTHON -c TEXT BACKEND SPEC IN OUT
BACKEND is numpy (on the CPU), torch (on the GPU) or opencv (preprocessing
only, on the CPU). SPEC is JSON: the source's
element size in bytes, its dtype "from" and the destination's "to", the
"scales" of an integer "to" (one, or one per position of logical dim
"axis"; none: 1), and, for "src" and "dst", the logical "dims", the
"padded" dims and the physical "axes" as [dim, extent, weight], outermost
first. The conversion is what a user of those libraries writes: view the
source's blocks as dims, transpose them into logical order and merge them,
drop the padding, cast where the dtypes differ (astype; quantizing as
round-half-even of x / scale, saturated; an integer source's values
converted exactly), pad to the destination's blocks,
split and transpose into its physical order, make it contiguous. A
preprocessing SPEC has "aipp" (the configuration) and "frames" in place of
"src": numpy runs AIPP's steps as docs/PREPROCESS.md defines them (planes
sliced, the matrix in integers with a floor shift, f32 normalization one
step at a time) and lays the result out as above; OpenCV runs what its
users write (cvtColor to RGB, then blobFromImages with the mean and one
scale factor) and reports how far that is from AIPP's values ("max_diff").
IN holds the source's bytes. One run
writes its result to OUT and prints its seconds; then a line on stdin gives
RUNS, and it times RUNS runs after two warm-up runs and prints their median
seconds (none when RUNS is 0). Each reply is one JSON line: {"seconds": s},
or {"skip": why} instead of the first.
"""
import json
import statistics
import sys
import time


def blocks_by_dim(layout):
    """The physical axes' indices, grouped by dim, outer blocks first."""
    axes = layout["axes"]
    return sorted(range(len(axes)), key=lambda i: (axes[i][0], -axes[i][2]))


class NumpyOps:
    def __init__(self):
        import numpy

        self.np = numpy

    def load(self, data, size):
        kinds = {1: self.np.uint8, 2: self.np.uint16, 4: self.np.uint32, 8: self.np.uint64}
        return self.np.frombuffer(data, dtype=kinds[size])

    def pad(self, x, pads):
        return self.np.pad(x, pads)

    def cast(self, x, frm, to, scale):
        np = self.np
        floats = {"f16": np.float16, "f32": np.float32, "f64": np.float64}
        ints = {"i8": np.int8, "u8": np.uint8}
        v = x.view(ints[frm] if frm in ints else floats[frm])
        if to == "bf16":  # numpy has none: f32's bits rounded to nearest even
            u = v.astype(np.float32).view(np.uint32).astype(np.uint64)
            return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
        if to in floats:
            y = v.astype(floats[to])
            return y.view({2: np.uint16, 4: np.uint32, 8: np.uint64}[y.itemsize])
        lo, hi, kind = (-128, 127, np.int8) if to == "i8" else (0, 255, np.uint8)
        q = np.clip(np.rint(v.astype(np.float64) / scale), lo, hi)
        return q.astype(kind).view(np.uint8)

    def permute(self, x, order):
        return x.transpose(order)

    def contiguous(self, x):
        return self.np.ascontiguousarray(x)

    def sync(self):
        pass

    def save(self, x):
        return x.tobytes()


class TorchOps:
    def __init__(self):
        import torch

        if not torch.cuda.is_available():
            raise RuntimeError("PyTorch sees no GPU")
        self.torch = torch
        self.fpad = torch.nn.functional.pad

    def load(self, data, size):
        kinds = {1: self.torch.uint8, 2: self.torch.int16, 4: self.torch.int32, 8: self.torch.int64}
        return self.torch.frombuffer(bytearray(data), dtype=kinds[size]).cuda()

    def pad(self, x, pads):
        flat = []
        for before, after in reversed(pads):  # F.pad takes the last dim first
            flat += [before, after]
        return self.fpad(x, flat)

    def permute(self, x, order):
        return x.permute(*order)

    def cast(self, x, frm, to, scale):
        t = self.torch
        floats = {"f16": t.float16, "bf16": t.bfloat16, "f32": t.float32,
                  "f64": t.float64}
        bits = {2: t.int16, 4: t.int32, 8: t.int64}
        ints = {"i8": t.int8, "u8": t.uint8}
        v = x.contiguous().view(ints[frm] if frm in ints else floats[frm])
        if to in floats:
            y = v.to(floats[to])
            return y.view(bits[y.element_size()])
        lo, hi, kind = (-128, 127, t.int8) if to == "i8" else (0, 255, t.uint8)
        q = t.clamp(t.round(v.double() / scale), lo, hi)
        return q.to(kind).view(t.uint8)

    def contiguous(self, x):
        return x.contiguous()

    def sync(self):
        self.torch.cuda.synchronize()

    def save(self, x):
        return x.cpu().numpy().tobytes()


def scale_of(ops, x, spec):
    """The quantization's scales, shaped to divide x (in logical order)."""
    scales, axis = spec["scales"] or [1.0], spec["axis"]
    if axis < 0:
        return scales[0]
    shape = [1] * len(x.shape)
    shape[axis] = len(scales)
    s = ops.np.asarray(scales, ops.np.float64).reshape(shape) \
        if hasattr(ops, "np") else \
        ops.torch.tensor(scales, dtype=ops.torch.float64).reshape(shape).cuda()
    return s


def aipp(np, frames, spec):
    """AIPP's steps on n frames: f32 values, (N, C, H, W)."""
    a, n = spec["aipp"], spec["frames"]
    w, h, fmt = a["w"], a["h"], a["format"]
    f = frames.reshape(n, -1)
    if fmt == "YUV420SP_U8":
        uv = f[:, w * h:].reshape(n, h // 2, w // 2, 2)
        uv = uv.repeat(2, axis=1).repeat(2, axis=2)
        p = np.stack([f[:, :w * h].reshape(n, h, w), uv[..., 0], uv[..., 1]],
                     1)
    elif fmt == "YUV400_U8":
        p = f.reshape(n, 1, h, w)
    else:
        q = f.reshape(n, h, w, 3 if fmt == "RGB888_U8" else 4)
        if fmt == "XRGB8888_U8":
            q = q[..., :3] if a["ax_swap"] else q[..., 1:]
        p = q.transpose(0, 3, 1, 2)
    p = p.astype(np.int32)
    if a["rbuv_swap"] and p.shape[1] == 3:
        i = 1 if fmt == "YUV420SP_U8" else 0
        p = p[:, [2, 1, 0] if i == 0 else [0, 2, 1]]
    x0, y0, cw, ch = a["crop"]
    p = p[:, :, y0:y0 + ch, x0:x0 + cw]
    if a["csc"]:
        m = np.array(a["matrix"], np.int32)
        if fmt == "YUV420SP_U8":
            p = np.einsum("ij,njhw->nihw", m,
                          p - np.array(a["input_bias"], np.int32)[:, None,
                                                                  None]) >> 8
        else:
            p = (np.einsum("ij,njhw->nihw", m, p) >> 8) + \
                np.array(a["output_bias"], np.int32)[:, None, None]
        p = np.clip(p, 0, 255)
    c = p.shape[1]
    norm = [np.array(a[k][:c], np.float32)[:, None, None]
            for k in ("mean", "min", "var_reci")]
    v = p.astype(np.float32) - norm[0]  # one rounding per step
    v = v - norm[1]
    v = v * norm[2]
    top, bottom, left, right = a["padding"]
    return np.pad(v, ((0, 0), (0, 0), (top, bottom), (left, right)),
                  constant_values=np.float32(a["padding_value"]))


def opencv(np, frames, spec):
    """What an OpenCV user writes: each frame to RGB (cvtColor), then
    blobFromImages with the mean and one scale factor: (N, 3, H, W) f32."""
    import cv2

    a, n = spec["aipp"], spec["frames"]
    w, h = a["w"], a["h"]
    if a["format"] == "YUV420SP_U8":
        code = cv2.COLOR_YUV2RGB_NV21 if a["rbuv_swap"] else \
            cv2.COLOR_YUV2RGB_NV12
        images = [cv2.cvtColor(fr.reshape(h * 3 // 2, w), code)
                  for fr in frames.reshape(n, -1)]
    else:
        images = list(frames.reshape(n, h, w, 3))
    mean = tuple(float(m) + float(k) for m, k in zip(a["mean"], a["min"]))
    return cv2.dnn.blobFromImages(images, float(a["var_reci"][0]), (w, h),
                                  mean, False, False)


def to_layout(ops, x, spec):
    """Logical values in "to"'s bits, padded and laid out as "dst"."""
    dst = spec["dst"]
    pads = [(0, p - n) for n, p in zip(dst["dims"], dst["padded"])]
    if any(after for _, after in pads):
        x = ops.pad(x, pads)
    order = blocks_by_dim(dst)
    x = x.reshape([dst["axes"][i][1] for i in order])
    x = ops.permute(x, [order.index(i) for i in range(len(order))])
    return ops.contiguous(x)


def convert(ops, x, spec):
    if "aipp" in spec:
        v = (opencv if spec.get("opencv") else aipp)(ops.np, x, spec)
        bits = ops.np.ascontiguousarray(v, ops.np.float32).view(ops.np.uint32)
        x = ops.cast(bits, "f32", spec["to"], 1.0) if spec["to"] != "f32" \
            else bits
        return to_layout(ops, x, spec)
    src = spec["src"]
    order = blocks_by_dim(src)
    x = x.reshape([e for _, e, _ in src["axes"]])
    x = ops.permute(x, order).reshape(src["padded"])
    x = x[tuple(slice(0, n) for n in src["dims"])]
    if spec["from"] != spec["to"]:
        x = ops.cast(x, spec["from"], spec["to"], scale_of(ops, x, spec))
    return to_layout(ops, x, spec)


def timed(ops, x, spec):
    """One conversion, synchronised: its seconds and its result."""
    ops.sync()
    t0 = time.perf_counter()
    y = convert(ops, x, spec)
    ops.sync()
    return time.perf_counter() - t0, y


def reply(obj):
    print(json.dumps(obj), flush=True)


def main():
    backend, spec, src_path, out_path = sys.argv[1:5]
    spec = json.loads(spec)
    try:
        ops = TorchOps() if backend == "torch" else NumpyOps()
        if backend == "opencv":
            import cv2  # noqa: F401  (skipped where it is missing)
            spec["opencv"] = True
    except (ImportError, RuntimeError) as e:
        reply({"skip": str(e)})
        return
    with open(src_path, "rb") as f:
        x = ops.load(f.read(), spec["size"])
    seconds, y = timed(ops, x, spec)
    with open(out_path, "wb") as f:
        f.write(ops.save(y))
    del y
    if spec.get("opencv"):  # how far from AIPP's values
        exact = aipp(ops.np, x, spec)
        got = opencv(ops.np, x, spec)
        reply({"seconds": seconds,
               "max_diff": float(ops.np.abs(got - exact).max())})
    else:
        reply({"seconds": seconds})
    runs = int(sys.stdin.readline() or 0)
    if runs > 0:
        times = [timed(ops, x, spec)[0] for _ in range(runs + 2)]
        reply({"seconds": statistics.median(times[2:])})  # 2 warm-ups


main()
