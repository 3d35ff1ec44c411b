"""test_preprocess.py - relayout preprocess against AIPP's definition in numpy

Each expected output is computed here from docs/PREPROCESS.md's steps,
written independently in numpy (planes sliced, channels swapped, the matrix
applied with an arithmetic shift, f32 normalization one step at a time,
f16 and bf16 rounded to nearest even) and laid out with numpy's pad,
reshape and transpose; relayout's bytes must equal it, on the reference
and on the CPU device's kernel alike. Each step alone and
all combined, every input format, odd sizes and crops, NCHW, NHWC,
NC1HWC0 and nChw16c, f32, f16 and bf16; then the configurations and
frames that must be refused, each naming what is wrong.
usage: test_preprocess.py PATH/TO/relayout
"""
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from checks import check, finish

RELAYOUT = sys.argv[1]
# removed at exit
SCRATCH = tempfile.TemporaryDirectory(prefix="relayout-preprocess-")
TMP = Path(SCRATCH.name)
rng = np.random.default_rng(11)
FORMATS = {"YUV420SP_U8": 1.5, "RGB888_U8": 3, "XRGB8888_U8": 4,
           "YUV400_U8": 1}
JPEG = [[256, 0, 359], [256, -88, -183], [256, 454, 0]]  # CANN's JPEG table
BT601 = [[66, 129, 25], [-38, -74, 112], [112, -94, -18]]  # RGB -> YUV


def config_text(c):
    lines = ["aipp_op {", "  aipp_mode: static"]
    for k, v in c.items():
        if isinstance(v, bool):
            v = "true" if v else "false"
        lines.append(f"  {k} : {v}")
    return "\n".join(lines + ["}"]) + "\n"


def expected(c, frames, n):
    """The NCHW float32 output of n frames under configuration c."""
    fmt, w, h = c["input_format"], c["src_image_size_w"], c["src_image_size_h"]
    size = int(w * h * FORMATS[fmt])
    out = []
    for i in range(n):
        f = frames[i * size:(i + 1) * size]
        if fmt == "YUV420SP_U8":
            y = f[:w * h].reshape(h, w)
            uv = f[w * h:].reshape(h // 2, w // 2, 2)
            uv = uv.repeat(2, axis=0).repeat(2, axis=1)
            p = np.stack([y, uv[..., 0], uv[..., 1]]).astype(np.int64)
            if c.get("rbuv_swap_switch"):
                p = p[[0, 2, 1]]
        elif fmt == "YUV400_U8":
            p = f.reshape(1, h, w).astype(np.int64)
        else:
            k = 3 if fmt == "RGB888_U8" else 4
            q = f.reshape(h, w, k)
            if k == 4:
                q = q[..., :3] if c.get("ax_swap_switch") else q[..., 1:]
            p = q.transpose(2, 0, 1).astype(np.int64)
            if c.get("rbuv_swap_switch"):
                p = p[[2, 1, 0]]
        if c.get("crop"):
            x0, y0 = c["load_start_pos_w"], c["load_start_pos_h"]
            p = p[:, y0:y0 + c["crop_size_h"], x0:x0 + c["crop_size_w"]]
        if c.get("csc_switch"):
            m = np.array([[c[f"matrix_r{r}c{k}"] for k in range(3)]
                          for r in range(3)], dtype=np.int64)
            if fmt == "YUV420SP_U8":
                bias = np.array([c.get(f"input_bias_{k}", 0)
                                 for k in range(3)])
                v = np.einsum("rk,khw->rhw", m, p - bias[:, None, None]) >> 8
            else:
                v = np.einsum("rk,khw->rhw", m, p) >> 8
                v += np.array([c.get(f"output_bias_{k}", 0)
                               for k in range(3)])[:, None, None]
            p = np.clip(v, 0, 255)
        v = p.astype(np.float32)
        for k in range(v.shape[0]):
            mean = np.float32(c.get(f"mean_chn_{k}", 0))
            low = np.float32(c.get(f"min_chn_{k}", 0))
            var = np.float32(c.get(f"var_reci_chn_{k}", 1))
            v[k] = ((v[k] - mean) - low) * var
        if c.get("padding"):
            v = np.pad(v, ((0, 0), (c.get("top_padding_size", 0),
                                    c.get("bottom_padding_size", 0)),
                           (c.get("left_padding_size", 0),
                            c.get("right_padding_size", 0))),
                       constant_values=np.float32(c.get("padding_value", 0)))
        out.append(v)
    return np.stack(out)


def to_dtype(x, dtype):
    if dtype == "f32":
        return x
    if dtype == "f16":
        return x.astype(np.float16)
    u = x.astype(np.float32).view(np.uint32).astype(np.uint64)  # bf16
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def layout(x, name):
    if name == "NCHW":
        return x
    if name == "NHWC":
        return x.transpose(0, 2, 3, 1)
    n, c, h, w = x.shape  # NC1HWC0 and nChw16c: C in blocks of 16
    x = np.pad(x, ((0, 0), (0, -c % 16), (0, 0), (0, 0)))
    return x.reshape(n, -1, 16, h, w).transpose(0, 1, 3, 4, 2)


def run(args, frames):
    """relayout preprocess on the reference and on the CPU device (its
    kernel, no note of the reference): the same exit and the same bytes.
    The CPU device's result."""
    (TMP / "frames").write_bytes(frames.tobytes())
    results = []
    for device in ("ref", "cpu"):
        out = TMP / f"out-{device}.npy"
        out.unlink(missing_ok=True)
        r = subprocess.run([RELAYOUT, "preprocess", *args, "--device", device,
                            str(TMP / "frames"), str(out)],
                           capture_output=True, text=True)
        results.append((r, np.load(out) if r.returncode == 0 else None))
    (r, want), (r_cpu, got) = results
    check(r.returncode == r_cpu.returncode and
          (want is None or (got is not None and
                            got.tobytes() == want.tobytes() and
                            "reference" not in r_cpu.stderr)),
          f"{' '.join(args)}: the CPU device's kernel gives the reference's "
          f"bytes ({r_cpu.stderr.strip()})")
    return r_cpu, got


def case(what, c, n=2, to="NCHW", dtype="f32"):
    (TMP / "a.cfg").write_text(config_text(c))
    size = int(c["src_image_size_w"] * c["src_image_size_h"] *
               FORMATS[c["input_format"]])
    frames = rng.integers(0, 256, n * size, dtype=np.uint8)
    r, got = run(["--aipp", str(TMP / "a.cfg"), "--to", to, "--dtype", dtype],
                 frames)
    check(r.returncode == 0, f"{what}: {r.stderr.strip()}")
    if got is None:
        return
    want = np.ascontiguousarray(layout(to_dtype(expected(c, frames, n), dtype),
                                       to))
    same = got.shape == want.shape and got.tobytes() == want.tobytes()
    differ = "-" if got.shape != want.shape else np.count_nonzero(
        np.frombuffer(got.tobytes(), np.uint8) !=
        np.frombuffer(want.tobytes(), np.uint8))
    check(same, f"{what} ({to} {dtype}): {got.shape} vs {want.shape}, "
          f"{differ} bytes differ")


def base(fmt, w=9, h=7):
    return {"input_format": fmt, "src_image_size_w": w, "src_image_size_h": h}


def matrix(m):
    return {f"matrix_r{r}c{k}": m[r][k] for r in range(3) for k in range(3)}


# Each step alone.
for fmt in FORMATS:
    w, h = (10, 8) if fmt == "YUV420SP_U8" else (9, 7)
    case(f"{fmt} as read", base(fmt, w, h))
    case(f"{fmt} cropped", {**base(fmt, w, h), "crop": True,
                            "load_start_pos_w": 2, "load_start_pos_h": 4,
                            "crop_size_w": 5, "crop_size_h": 3})
    case(f"{fmt} padded", {**base(fmt, w, h), "padding": True,
                           "left_padding_size": 3, "right_padding_size": 1,
                           "top_padding_size": 2, "bottom_padding_size": 5,
                           "padding_value": -1.25})
    case(f"{fmt} normalized", {**base(fmt, w, h), "mean_chn_0": 104,
                               "min_chn_0": 0.5, "var_reci_chn_0": 0.017,
                               "mean_chn_1": 3, "var_reci_chn_1": 1.7})
    if fmt != "YUV400_U8":
        case(f"{fmt} swapped", {**base(fmt, w, h), "rbuv_swap_switch": True})
case("XRGB8888_U8, the unused byte last", {**base("XRGB8888_U8"),
                                           "ax_swap_switch": True})
case("NV12 to RGB (JPEG)", {**base("YUV420SP_U8", 6, 4), "csc_switch": True,
                            **matrix(JPEG), "input_bias_1": 128,
                            "input_bias_2": 128})
case("RGB to YUV (BT.601)", {**base("RGB888_U8"), "csc_switch": True,
                             **matrix(BT601), "output_bias_0": 16,
                             "output_bias_1": 128, "output_bias_2": 128})

# All at once, into each layout and dtype.
full = {**base("YUV420SP_U8", 12, 10), "crop": True, "load_start_pos_w": 4,
        "load_start_pos_h": 2, "crop_size_w": 7, "crop_size_h": 5,
        "csc_switch": True, **matrix(JPEG), "input_bias_1": 128,
        "input_bias_2": 128, "rbuv_swap_switch": True, "mean_chn_0": 104,
        "mean_chn_1": 117, "mean_chn_2": 123, "min_chn_2": 0.25,
        "var_reci_chn_0": 0.0171, "var_reci_chn_1": 0.0175,
        "var_reci_chn_2": 0.0174, "padding": True, "left_padding_size": 2,
        "right_padding_size": 3, "top_padding_size": 1,
        "bottom_padding_size": 4, "padding_value": 0.5}
for to in ("NCHW", "NHWC", "NC1HWC0", "nChw16c"):
    for dtype in ("f32", "f16", "bf16"):
        case("all steps", full, n=3, to=to, dtype=dtype)

# The options' form: (x * scale - mean) / std as min_chn = mean / scale and
# var_reci_chn = scale / std (the numbers read as f32, divided in f64).
frames = rng.integers(0, 256, 2 * 5 * 4 * 3, dtype=np.uint8)
mean, std = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)
r, got = run(["--input-format", "RGB888_U8", "--size", "5x4", "--mean",
              ",".join(map(str, mean)), "--std", ",".join(map(str, std)),
              "--scale", "1/255", "--to", "NCHW", "--dtype", "f32"], frames)
c = {**base("RGB888_U8", 5, 4)}
for k in range(3):
    c[f"min_chn_{k}"] = float(np.float32(float(np.float32(mean[k])) /
                                         (1 / 255)))
    c[f"var_reci_chn_{k}"] = float(np.float32((1 / 255) /
                                              float(np.float32(std[k]))))
want = expected(c, frames, 2)
check(got is not None and got.tobytes() == want.tobytes(),
      f"--mean --std --scale: {r.stderr.strip()}")
x = frames.reshape(2, 4, 5, 3).transpose(0, 3, 1, 2)
close = (x / 255 - np.array(mean)[:, None, None]) / \
    np.array(std)[:, None, None]
check(got is not None and np.abs(got - close).max() < 1e-5,
      "--mean --std --scale: within rounding of (x / 255 - mean) / std")


# --raw: the same bytes as the .npy's data, no header.
(TMP / "a.cfg").write_text(config_text(full))
size = int(full["src_image_size_w"] * full["src_image_size_h"] *
           FORMATS[full["input_format"]])
frames = rng.integers(0, 256, 2 * size, dtype=np.uint8)
r, got = run(["--aipp", str(TMP / "a.cfg"), "--to", "NC1HWC0"], frames)
r2 = subprocess.run([RELAYOUT, "preprocess", "--aipp", str(TMP / "a.cfg"),
                     "--to", "NC1HWC0", "--raw", str(TMP / "frames"),
                     str(TMP / "out.raw")], capture_output=True, text=True)
check(r2.returncode == 0 and got is not None and
      (TMP / "out.raw").read_bytes() == got.tobytes(),
      f"--raw: the output's bytes alone ({r2.stderr.strip()})")


# Several devices (PoCL's two and the reference), batches of 3 of 11 frames
# in turn over them, from a file and from a pipe: the expected bytes.
eleven = rng.integers(0, 256, 11 * size, dtype=np.uint8)
(TMP / "eleven").write_bytes(eleven.tobytes())
want = np.ascontiguousarray(layout(to_dtype(expected(full, eleven, 11), "f16"),
                                   "NC1HWC0"))
env = {**os.environ, "POCL_DEVICES": "pthread pthread"}
for device, source in (("all", "file"), ("0,1,ref", "file"), ("all", "pipe")):
    out = TMP / "several.npy"
    out.unlink(missing_ok=True)
    args = [RELAYOUT, "preprocess", "--aipp", str(TMP / "a.cfg"), "--to",
            "NC1HWC0", "--dtype", "f16", "--batch", "3", "--device", device,
            "-" if source == "pipe" else str(TMP / "eleven"), str(out)]
    r = subprocess.run(args, capture_output=True, env=env,
                       input=eleven.tobytes() if source == "pipe" else None)
    got = np.load(out) if r.returncode == 0 else None
    check(got is not None and got.tobytes() == want.tobytes(),
          f"--device {device}, frames from a {source}, batches in turn: the "
          f"expected bytes ({r.stderr.decode().strip()})")


# An integer output: v quantized as docs/CASTS.md says (round half even
# of v / scale, plus the zero point, saturated).
for dtype, zp, lo, hi in (("i8", -3, -128, 127), ("u8", 128, 0, 255)):
    r, got = run(["--aipp", str(TMP / "a.cfg"), "--to", "NCHW", "--dtype",
                  dtype, "--quant-scale", "0.05", "--quant-zero-point",
                  str(zp)], frames)
    v = expected(full, frames, 2).astype(np.float64)
    want = np.clip(np.rint(v / np.float64(np.float32(0.05))) + zp, lo, hi)
    check(got is not None and got.dtype == np.dtype(dtype.replace("i8", "int8")
                                                    .replace("u8", "uint8"))
          and np.array_equal(got, want),
          f"--dtype {dtype} --quant-scale 0.05 --quant-zero-point {zp}: "
          f"{r.stderr.strip()}")


# Refusals, each naming what is wrong.
def refused(what, text, args=None, frames_len=4 * 4 * 3, needle=""):
    (TMP / "bad.cfg").write_text(text)
    r, _ = run(args or ["--aipp", str(TMP / "bad.cfg"), "--to", "NCHW"],
               rng.integers(0, 256, frames_len, dtype=np.uint8))
    check(r.returncode != 0 and needle in r.stderr,
          f"{what}: exit {r.returncode}, '{r.stderr.strip()}'")


ok = "aipp_op {\n input_format: RGB888_U8\n src_image_size_w: 4\n" \
     " src_image_size_h: 4\n"
refused("an unknown key, by name and line", ok + " sharpen: 3\n}\n",
        needle="line 5: 'sharpen'")
refused("dynamic AIPP", "aipp_op {\n aipp_mode: dynamic\n}\n",
        needle="line 2: aipp_mode dynamic")
refused("a key twice", ok + " src_image_size_w: 4\n}\n", needle="twice")
refused("a value out of range", ok + " matrix_r0c0: 40000\n}\n",
        needle="line 5: matrix_r0c0")
refused("no closing brace", ok, needle="expected '}'")
refused("no value", ok + " crop:\n}\n", needle="crop has no value")
refused("a stray byte", ok + " crop = true\n}\n", needle="expected ':'")
refused("trailing text", ok + "}\n@\n", needle="expected aipp_op")
refused("a crop size without crop", ok + " crop_size_w: 2\n}\n",
        needle="set crop: true")
refused("a crop outside the frame", ok + " crop: true\n load_start_pos_w: 2\n"
        " crop_size_w: 3\n crop_size_h: 1\n}\n", needle="does not fit")
refused("an odd crop start in NV12", "aipp_op {\n input_format: YUV420SP_U8\n"
        " src_image_size_w: 4\n src_image_size_h: 4\n crop: true\n"
        " load_start_pos_w: 1\n crop_size_w: 2\n crop_size_h: 2\n}\n",
        frames_len=24, needle="even")
refused("an odd NV12 frame", "aipp_op {\n input_format: YUV420SP_U8\n"
        " src_image_size_w: 5\n src_image_size_h: 4\n}\n", frames_len=30,
        needle="even width")
refused("CSC on YUV400", "aipp_op {\n input_format: YUV400_U8\n"
        " src_image_size_w: 4\n src_image_size_h: 4\n csc_switch: true\n}\n",
        frames_len=16, needle="YUV400_U8")
refused("frames not of the configured size, never resized", ok + "}\n",
        frames_len=50, needle="never resized")
refused("a layout without N, C, H and W", ok + "}\n",
        args=["--aipp", str(TMP / "bad.cfg"), "--to", "FRACTAL_NZ"],
        needle="--to FRACTAL_NZ")
refused("--aipp and options at once", ok + "}\n",
        args=["--aipp", str(TMP / "bad.cfg"), "--size", "4x4", "--to", "NCHW"],
        needle="not both")
refused("a quantization of a float output", ok + "}\n",
        args=["--aipp", str(TMP / "bad.cfg"), "--to", "NCHW",
              "--quant-scale", "0.5"], needle="quantize an i8 or u8")
refused("a zero scale", ok + "}\n",
        args=["--aipp", str(TMP / "bad.cfg"), "--to", "NCHW", "--dtype", "i8",
              "--quant-scale", "0"], needle="--quant-scale: '0'")
refused("a zero point out of range", ok + "}\n",
        args=["--aipp", str(TMP / "bad.cfg"), "--to", "NCHW", "--dtype", "u8",
              "--quant-zero-point", "300"], needle="outside u8's range")
refused("a dtype without a meaning here", ok + "}\n",
        args=["--aipp", str(TMP / "bad.cfg"), "--to", "NCHW", "--dtype",
              "i32"], needle="--dtype i32")
refused("a zero std", ok + "}\n",
        args=["--input-format", "RGB888_U8", "--size", "4x4", "--std",
              "1,0,1", "--to", "NCHW"],
        needle="channel 1: the mean must be finite and the std finite and "
               "not zero")
refused("an f32 value that underflows to 0", ok + " var_reci_chn_0: 1e-60\n}\n",
        needle="line 5: var_reci_chn_0: '1e-60' is too small for f32")


# Values of any length are read whole (they were cut at 63 characters),
# and a UTF-8 byte order mark before the text is passed over.
def same_output(what, text, twin):
    frames = rng.integers(0, 256, 2 * 4 * 4 * 3, dtype=np.uint8)
    outs = []
    for t in (text, twin):
        (TMP / "a.cfg").write_bytes(t.encode())
        r, got = run(["--aipp", str(TMP / "a.cfg"), "--to", "NCHW", "--dtype",
                      "f32"], frames)
        outs.append(got.tobytes() if r.returncode == 0 else r.stderr)
    check(outs[0] == outs[1] and isinstance(outs[0], bytes),
          f"{what}: the same output as its short twin")


zeros = "0" * 70
same_output("a 71-character mean", ok + f" mean_chn_0: {zeros}1\n}}\n",
            ok + " mean_chn_0: 1\n}\n")
same_output("a 78-character reciprocal", ok +
            f" var_reci_chn_0: 0.{zeros}1e70\n}}\n",
            ok + " var_reci_chn_0: 0.1\n}\n")
same_output("a zero-padded width", ok.replace(" src_image_size_w: 4",
                                             f" src_image_size_w: {zeros}4") +
            "}\n", ok + "}\n")
same_output("a byte order mark", "\ufeff" + ok + "}\n", ok + "}\n")
finish()
