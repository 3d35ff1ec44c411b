"""images.py - JPEG files to a model's input, end to end: relayout against
OpenCV

Writes N JPEGs of W x H (smooth random images, quality 90, 4:2:0) with
OpenCV, then times, each the median of RUNS runs in the same session:
- `relayout preprocess --aipp CFG --to LAYOUT --dtype f16 --device D
  DIR out.npy` (LAYOUT: NCHW, as blobFromImages gives, or NC1HWC0) (the whole command: start, decoding, the device, the .npy
  written), with an RGB888_U8 configuration of ImageNet's mean and
  var_reci, then a YUV420SP_U8 one with CANN's JPEG colour conversion too
  (the JPEG decoded straight to its planes);
- OpenCV as its users write it, in this process: imread, cvtColor to RGB,
  blobFromImages with the mean and one scale factor, then numpy's f16 cast
  (and for NC1HWC0, its layout), saved with np.save and fsync'd, as the
  command makes its output durable before renaming it into place (files
  in, an .npy on disk out, both ways).
Prints images per second for both, the ratio, and the largest difference
between the two outputs (OpenCV's rounding and colour conversion are not
AIPP's).
usage: images.py PATH/TO/relayout [N W H DEVICE RUNS LAYOUT]
(python3 with cv2)
"""
import os
import statistics
import subprocess
import sys
import tempfile
import timeit
from pathlib import Path

import cv2
import numpy as np

relayout = sys.argv[1]
n, w, h = (int(v) for v in (sys.argv[2:5] if len(sys.argv) > 4
                            else (256, 224, 224)))
device = sys.argv[5] if len(sys.argv) > 5 else "cpu"
runs = int(sys.argv[6]) if len(sys.argv) > 6 else 5
layout = sys.argv[7] if len(sys.argv) > 7 else "NCHW"
# removed at exit
scratch = tempfile.TemporaryDirectory(prefix="relayout-images-")
tmp = Path(scratch.name)
MEAN = (123.675, 116.28, 103.53)
VAR = (0.0171247538, 0.0175070028, 0.0174291939)
JPEG = [[256, 0, 359], [256, -88, -183], [256, 454, 0]]


def config(yuv):
    keys = {"input_format": "YUV420SP_U8" if yuv else "RGB888_U8",
            "src_image_size_w": w, "src_image_size_h": h}
    if yuv:
        keys.update({"csc_switch": "true", "input_bias_1": 128,
                     "input_bias_2": 128})
        keys.update({f"matrix_r{i}c{j}": JPEG[i][j]
                     for i in range(3) for j in range(3)})
    keys.update({f"mean_chn_{k}": MEAN[k] for k in range(3)})
    keys.update({f"var_reci_chn_{k}": VAR[k] for k in range(3)})
    text = "aipp_op {\n" + "".join(f" {k}: {v}\n" for k, v in keys.items())
    path = tmp / ("yuv.cfg" if yuv else "rgb.cfg")
    path.write_text(text + "}\n")
    return path


def nc1hwc0(x):
    n_, c, hh, ww = x.shape
    x = np.pad(x, ((0, 0), (0, -c % 16), (0, 0), (0, 0)))
    return np.ascontiguousarray(
        x.reshape(n_, -1, 16, hh, ww).transpose(0, 1, 3, 4, 2))


def opencv(files):
    images = [cv2.cvtColor(cv2.imread(str(f)), cv2.COLOR_BGR2RGB)
              for f in files]
    blob = cv2.dnn.blobFromImages(images, VAR[0], (w, h), MEAN, False, False)
    blob = blob.astype(np.float16)
    return nc1hwc0(blob) if layout == "NC1HWC0" else blob


def save(path, a):
    with open(path, "wb") as f:
        np.save(f, a)
        f.flush()
        os.fsync(f.fileno())


def median(f):
    return statistics.median(timeit.repeat(f, number=1, repeat=runs))


rng = np.random.default_rng(1)
(tmp / "jpg").mkdir()
for i in range(n):
    noise = rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
    cv2.imwrite(str(tmp / "jpg" / f"{i:05d}.jpg"),
                cv2.GaussianBlur(noise, (9, 9), 0),
                [cv2.IMWRITE_JPEG_QUALITY, 90])
files = sorted((tmp / "jpg").iterdir())
want = opencv(files)
for yuv in (False, True):
    cmd = [relayout, "preprocess", "--aipp", str(config(yuv)), "--to",
           layout, "--dtype", "f16", "--device", device,
           str(tmp / "jpg"), str(tmp / "out.npy")]
    subprocess.run(cmd, check=True)  # the kernel built and cached
    t_relayout = median(lambda: subprocess.run(cmd, check=True))
    got = np.load(tmp / "out.npy")
    diff = float(np.abs(got.astype(np.float32) - want.astype(np.float32))
                 .max())
    t_cv = median(lambda: save(tmp / "cv.npy", opencv(files)))
    print(f"{n} JPEGs {w}x{h} -> {layout} f16 ({'YUV420SP' if yuv else 'RGB'}"
          f" on {device}): relayout {n / t_relayout:.0f} images/s, OpenCV "
          f"{n / t_cv:.0f} images/s, {t_cv / t_relayout:.2f}x; outputs "
          f"differ by up to {diff:.3f}")
