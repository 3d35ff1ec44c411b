"""python_overhead.py - what the Python package adds to a conversion

relayout.convert (numpy in, a new numpy array out, its engine and plan kept
from the first call) against the C API's relayout_plan_run on the same plan
into a new 64-byte-aligned array each run; and Plan.run into an array made
beforehand against relayout_plan_run into that array. Medians of N runs,
warm: the ratios, and the overheads in microseconds.
usage: python_overhead.py [DEVICE] [RUNS]   (the package installed)
"""
import statistics
import sys
import time

import numpy as np

import relayout
from relayout._lib import Error, lib

device = sys.argv[1] if len(sys.argv) > 1 else "cpu"
runs = int(sys.argv[2]) if len(sys.argv) > 2 else 30


def median_seconds(f):
    f()
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


for label, shape in (("64 MiB f32", (4, 64, 256, 256)),
                     ("small f32", (1, 3, 8, 8))):
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    t_py = median_seconds(
        lambda: relayout.convert(x, "NCHW", "NHWC", device=device))
    plan = relayout._engine(device).plan("NCHW", "NHWC", shape, "f32")
    out = relayout._empty(plan.dst_shape, np.float32)
    err = Error()
    def c_api(o):
        lib.relayout_plan_run(plan._handle, o.ctypes.data, o.nbytes,
                              x.ctypes.data, x.nbytes, err)

    t_c = median_seconds(lambda: c_api(
        relayout._empty(plan.dst_shape, np.float32)))
    t_py_reuse = median_seconds(lambda: plan.run(x, out=out))
    t_c_reuse = median_seconds(lambda: c_api(out))
    print(f"{label} NCHW -> NHWC on {relayout._engine(device).device}: "
          f"new array: Python {t_py * 1e6:.1f} us, C API {t_c * 1e6:.1f} us, "
          f"ratio {t_py / t_c:.3f}, overhead {(t_py - t_c) * 1e6:.1f} us; "
          f"array reused: Python {t_py_reuse * 1e6:.1f} us, C API "
          f"{t_c_reuse * 1e6:.1f} us, ratio {t_py_reuse / t_c_reuse:.3f}, "
          f"overhead {(t_py_reuse - t_c_reuse) * 1e6:.1f} us")
