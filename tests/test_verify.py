"""test_verify.py - relayout verify against candidates made by numpy

Each candidate is built here with numpy's pad, reshape, transpose and
astype from the layouts' definitions (docs/LAYOUTS.md): verify passes it;
with one element changed in its data, and one in its padding, verify fails
and names each (logical coordinate, or padding). Raw files, a cast, and
candidates of the wrong shape or dtype too.
usage: test_verify.py PATH/TO/relayout
"""
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from checks import check, finish

RELAYOUT = sys.argv[1]
# removed at exit
SCRATCH = tempfile.TemporaryDirectory(prefix="relayout-verify-")
TMP = Path(SCRATCH.name)
rng = np.random.default_rng(3)


def verify(src, dst, x, cand, *extra, raw=False):
    xi, ci = TMP / "in", TMP / "cand"
    if raw:
        xi.write_bytes(x.tobytes())
        ci.write_bytes(cand.tobytes())
        names = {np.float16: "f16", np.float32: "f32"}
        extra = ("--shape", "x".join(map(str, x.shape)), "--dtype",
                 names[x.dtype.type], *extra)
    else:
        np.save(xi.with_suffix(".npy"), x)
        np.save(ci.with_suffix(".npy"), cand)
        xi, ci = xi.with_suffix(".npy"), ci.with_suffix(".npy")
    r = subprocess.run([RELAYOUT, "verify", "--from", src, "--to", dst, *extra,
                        str(xi), str(ci)], capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr


def pad_to(x, axis, multiple):
    width = [(0, 0)] * x.ndim
    width[axis] = (0, -x.shape[axis] % multiple)
    return np.pad(x, width)


def nc1hwc0(x, c0):
    n, c, h, w = x.shape
    return pad_to(x, 1, c0).reshape(n, -1, c0, h, w).transpose(0, 1, 3, 4, 2)


def fractal_nz(x):
    x = pad_to(pad_to(x, 0, 16), 1, 16)
    m, n = x.shape
    return x.reshape(m // 16, 16, n // 16, 16).transpose(2, 0, 1, 3)


x4 = rng.standard_normal((2, 17, 5, 3)).astype(np.float16)
m2 = rng.standard_normal((20, 28)).astype(np.float16)
cases = [("NCHW", "NC1HWC0", x4, nc1hwc0(x4, 16),
          (0, 1, 2, 1, 0), "N=0,C=16,H=2,W=1", (1, 1, 4, 2, 15)),
         ("ND", "FRACTAL_NZ", m2, fractal_nz(m2),
          (0, 0, 0, 1), "M=0,N=1", (1, 1, 15, 15)),
         ("NCHW", "NHWC", x4, x4.transpose(0, 2, 3, 1), (1, 4, 2, 16),
          "N=1,C=16,H=4,W=2", None)]
for src, dst, x, want, data_at, coord, pad_at in cases:
    want = np.ascontiguousarray(want)
    for raw in (False, True):
        rc, out = verify(src, dst, x, want, raw=raw)
        check(rc == 0 and "equals the reference" in out,
              f"{src} -> {dst} (raw {raw}): numpy's candidate passes: {out}")
    bad = want.copy()
    bad[data_at] += 1
    if pad_at:
        bad[pad_at] = 7
    rc, out = verify(src, dst, x, bad)
    check(rc == 1 and f"data     {coord} " in out,
          f"{src} -> {dst}: the changed data element is named {coord}: {out}")
    check(not pad_at or "padding" in out.split("first")[1],
          f"{src} -> {dst}: the changed padding element is named padding: "
          f"{out}")
    check(f"({1} data, {1 if pad_at else 0} padding)" in out,
          f"{src} -> {dst}: the counts: {out}")

# A cast: candidates in f16 of an f32 input.
x = rng.standard_normal((2, 17, 5, 3)).astype(np.float32)
rc, out = verify("NCHW", "NC1HWC0", x, nc1hwc0(x.astype(np.float16), 16),
                 "--to-dtype", "f16")
check(rc == 0, f"a cast's candidate passes: {out}")
# A Fortran-order quantized input, dequantized: read by its logical shape.
q = rng.integers(-128, 128, (6, 5)).astype(np.int8)
rc, out = verify("ND", "ND", np.asfortranarray(q),
                 ((q.astype(np.float64) - 3) * 0.5).astype(np.float32),
                 "--to-dtype", "f32", "--from-scale", "0.5",
                 "--from-zero-point", "3")
check(rc == 0, f"a Fortran-order i8 input, dequantized: {out}")
# Wrong candidates are refused with a message, not compared.
rc, out = verify("NCHW", "NC1HWC0", x4, nc1hwc0(x4, 16)[:, :1])
check(rc == 1 and "physical shape" in out, f"a candidate of another shape: {out}")
rc, out = verify("NCHW", "NC1HWC0", x4, nc1hwc0(x4, 16).astype(np.float32))
check(rc == 1 and "'<f2'" in out, f"a candidate of another dtype: {out}")
rc, out = verify("NCHW", "NC1HWC0", x4, nc1hwc0(x4, 16)[..., :8], raw=True)
check(rc == 1 and "holds 960 bytes; the destination's layout takes 1920" in out,
      f"a raw candidate of another size: {out}")
rc, out = verify("NCHW", "NC1HWC0", x4, nc1hwc0(x4, 16), "--report", "0")
check(rc == 2 and "--report" in out, f"--report 0 is a usage error: {out}")
finish()
