"""test_casts.py - casts and quantization (docs/CASTS.md) against numpy

The reference's casts (relayout convert --device ref) are checked against
numpy's conversions, against bit manipulation written here (bf16, NaNs) and
against exact rational rounding (fractions), on the values where casts go
wrong: every f16 value, its f32 and f64 neighbours and the midpoints between
f16 values (ties), the largest finite values and the overflow edge,
subnormals, signed zeros, infinities, NaN payloads, random bit patterns.
Every conversion also runs on the CPU device (--device cpu, its own
specialised kernel: integer arithmetic, or for quantizing, fp64 where the
device has it), whose bytes must equal the reference's.
usage: test_casts.py PATH/TO/relayout
"""
import subprocess
import sys
import tempfile
import warnings
from fractions import Fraction
from pathlib import Path

import numpy as np

from checks import check, finish

RELAYOUT = sys.argv[1]
# removed at exit
SCRATCH = tempfile.TemporaryDirectory(prefix="relayout-casts-")
TMP = Path(SCRATCH.name)
STORAGE = {"f16": np.uint16, "bf16": np.uint16, "f32": np.uint32,
           "f64": np.uint64, "i8": np.int8, "u8": np.uint8}
FLOAT = {"f16": (10, 5), "bf16": (7, 8), "f32": (23, 8), "f64": (52, 11)}
RANGE = {"i8": (-128, 127), "u8": (0, 255), "i4": (-8, 7), "u4": (0, 15)}
rng = np.random.default_rng(7)
warnings.simplefilter("ignore")  # numpy's overflow and NaN warnings


def run(src, sdt, ddt, n, extra=(), layouts=("ND", "ND"), shape=None):
    """src's bytes cast from sdt to ddt on the reference and on the CPU
    device; the reference's bytes (both must agree)."""
    (TMP / "in").write_bytes(src)
    outs = []
    for device in ("ref", "cpu"):
        out = TMP / ("out-" + device)
        cmd = [RELAYOUT, "convert", "--from", layouts[0], "--to", layouts[1],
               "--shape", shape or str(n), "--dtype", sdt, "--to-dtype", ddt,
               "--device", device, *extra, str(TMP / "in"), str(out)]
        if device == "cpu":  # its own kernel, not the generic one meanwhile
            cmd.insert(-2, "--wait-compile")
        r = subprocess.run(cmd, capture_output=True, text=True)
        check(r.returncode == 0, f"{' '.join(cmd)}: {r.stderr.strip()}")
        check("reference" not in r.stderr,
              f"{sdt} -> {ddt} on {device}: note '{r.stderr.strip()}'")
        outs.append(out.read_bytes() if out.exists() else b"")
    check(outs[0] == outs[1], f"{sdt} -> {ddt}: the CPU device's bytes "
          f"equal the reference's ({layouts[0]} -> {layouts[1]})")
    return outs[0]


def exact_round(x, m, e):
    """A finite value rounded to nearest even in a float of m fraction and e
    exponent bits, by rational arithmetic: its bits."""
    bias = (1 << (e - 1)) - 1
    sign = 1 if np.signbit(x) else 0
    v = abs(Fraction(float(x)))
    top = sign << (m + e)
    if v == 0:
        return top
    x_exp = max(v.numerator.bit_length() - v.denominator.bit_length(), 1 - bias)
    while Fraction(2) ** x_exp > v and x_exp > 1 - bias:
        x_exp -= 1
    while Fraction(2) ** (x_exp + 1) <= v:
        x_exp += 1
    q = v / Fraction(2) ** (x_exp - m)
    r = q.numerator // q.denominator
    rest = q - r
    if rest > Fraction(1, 2) or (rest == Fraction(1, 2) and r % 2):
        r += 1
    if r == 1 << (m + 1):
        r, x_exp = r >> 1, x_exp + 1
    if x_exp > bias:
        return top | ((1 << e) - 1) << m
    if r < 1 << m:
        return top | r
    return top | (x_exp + bias) << m | (r - (1 << m))


def nan_bits(b, s, d):
    """NaN to NaN as defined: sign kept, quiet, leading payload kept."""
    sm, se = FLOAT[s]
    dm, de = FLOAT[d]
    b = int(b)
    payload = b & ((1 << sm) - 1)
    payload = payload << (dm - sm) if dm >= sm else payload >> (sm - dm)
    return ((b >> (sm + se)) & 1) << (dm + de) | ((1 << de) - 1) << dm | \
        1 << (dm - 1) | payload


def is_nan_bits(b, t):
    m, e = FLOAT[t]
    b = int(b)
    return (b >> m) & ((1 << e) - 1) == (1 << e) - 1 and b & ((1 << m) - 1)


def values(t):
    """Source bit patterns of a float type: specials, every f16 value and
    its neighbours and midpoints where t holds them, random patterns."""
    every_half = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
    halves = every_half.view(np.float16).astype(np.float64)
    finite = np.unique(halves[np.isfinite(halves)])
    mids = (finite[1:] + finite[:-1]) / 2
    if t == "f16":
        return every_half
    if t == "bf16":
        rnd = rng.integers(0, 1 << 16, 20000, dtype=np.uint32)
        return np.concatenate([every_half[::3], rnd.astype(np.uint16)])
    ft = np.float32 if t == "f32" else np.float64
    base = np.concatenate([finite, mids, [65504, 65519.99, 65520, 65536,
                                          3.4e38, 1e-45, 5.96e-8, 2.98e-8]])
    base = np.concatenate([base, -base]).astype(ft)
    near = np.concatenate([np.nextafter(base, ft(np.inf)),
                           np.nextafter(base, ft(-np.inf))])
    st = STORAGE[t]
    bits = rng.integers(0, np.iinfo(st).max, 20000, dtype=st, endpoint=True)
    # bf16 ties from f32: low halves of exactly 0x8000, both parities
    ties = (rng.integers(0, 1 << 16, 2000, dtype=np.uint64) << 16 | 0x8000)
    specials = np.array([np.inf, -np.inf, 0.0, -0.0], dtype=ft)
    nan_payloads = np.array([0x7FC00000, 0xFF800001, 0x7F800123, 0xFFFFFFFF]
                            if t == "f32" else
                            [0x7FF8000000000000, 0xFFF0000000000001,
                             0x7FF0123456789ABC, 0xFFFFFFFFFFFFFFFF],
                            dtype=st)
    return np.concatenate([x.view(st) if x.dtype != st else x for x in
                           [base, near, specials, nan_payloads, bits,
                            ties.astype(st)]])


NUMPY = {"f16": np.float16, "f32": np.float32, "f64": np.float64}


def bf16_ties():
    """f64 values on, and next to, the midpoints between bf16 values."""
    b = rng.integers(0, 0x7F7F, 3000, dtype=np.uint32)
    lo = (b << 16).view(np.float32).astype(np.float64)
    hi = ((b + 1) << 16).view(np.float32).astype(np.float64)
    mids = (lo + hi) / 2
    return np.concatenate([mids, np.nextafter(mids, np.inf),
                           np.nextafter(mids, -np.inf), -mids]).view(np.uint64)


def float_to_float(s, d):
    src = values(s)
    if s == "f64" and d == "bf16":  # exact rounding is slow: a sample
        src = np.concatenate([rng.choice(src, 4000), bf16_ties()])
    out = np.frombuffer(run(src.tobytes(), s, d, src.size), STORAGE[d])
    nan = np.array([bool(is_nan_bits(b, s)) for b in src])
    x = as_float(src, s) if s != "f64" else src.view(np.float64)
    if d == "bf16" and s != "f64":
        u = x.astype(np.float32).view(np.uint32).astype(np.uint64)
        want = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    elif d == "bf16":
        want = np.array([0 if n else exact_round(v, 7, 8)
                         for v, n in zip(x, nan)], np.uint64)
    else:
        want = x.astype(NUMPY[d]).view(STORAGE[d]).astype(np.uint64)
    want = want.astype(np.uint64)
    for i in np.nonzero(nan)[0]:
        want[i] = nan_bits(src[i], s, d)
    bad = np.nonzero(out.astype(np.uint64) != want)[0]
    for i in bad[:3]:
        print(f"  {s} {int(src[i]):#x} -> {d}: {int(out[i]):#x}, "
              f"wanted {int(want[i]):#x}")
    check(not bad.size, f"{s} -> {d}: {bad.size} of {src.size} values differ")


def as_float(src, s):
    """Float bit patterns' values, exactly, as f64."""
    if s == "bf16":
        return (src.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return src.view({"f16": np.float16, "f32": np.float32}[s]).astype(
        np.float64)


def nibbles(q):
    q = np.asarray(q, np.int64) & 0xF
    if q.size % 2:
        q = np.append(q, 0)
    return (q[0::2] | q[1::2] << 4).astype(np.uint8)


def unnibble(b, n, signed):
    b = np.frombuffer(b, np.uint8).astype(np.int64)
    q = np.stack([b & 0xF, b >> 4], 1).reshape(-1)[:n]
    return np.where(q > 7, q - 16, q) if signed else q


def quantize(s, d, scale, zp):
    src = values(s)[:30000]
    x = as_float(src, s)
    lo, hi = RANGE[d]
    want = np.where(np.isnan(x), zp,
                    np.clip(np.rint(x / np.float64(np.float32(scale))) + zp,
                            lo, hi))
    got = run(src.tobytes(), s, d, src.size,
              ["--scale", repr(scale), "--zero-point", str(zp)])
    got = unnibble(got, src.size, d == "i4") if d in ("i4", "u4") else \
        np.frombuffer(got, STORAGE[d]).astype(np.int64)
    bad = int(np.sum(got != want))
    check(not bad, f"{s} -> {d} scale {scale} zero point {zp}: {bad} differ")


def dequantize(s, d, scale, zp):
    lo, hi = RANGE[s]
    q = np.arange(lo, hi + 1)
    src = nibbles(q) if s in ("i4", "u4") else q.astype(STORAGE[s])
    got = np.frombuffer(run(src.tobytes(), s, d, q.size,
                            ["--from-scale", repr(scale),
                             "--from-zero-point", str(zp)]), STORAGE[d])
    exact = (q - zp) * np.float64(np.float32(scale))
    if d == "bf16":
        want = [exact_round(v, 7, 8) for v in exact]
    else:
        ft = {"f16": np.float16, "f32": np.float32, "f64": np.float64}[d]
        want = exact.astype(ft).view(STORAGE[d]).tolist()
    bad = sum(int(a) != int(b) for a, b in zip(got, want))
    check(not bad, f"{s} -> {d} scale {scale} zero point {zp}: {bad} differ")


def integer(s, d, szp, dzp):
    lo, hi = RANGE[s]
    q = np.arange(lo, hi + 1)
    src = nibbles(q) if s in ("i4", "u4") else q.astype(STORAGE[s])
    got = run(src.tobytes(), s, d, q.size,
              ["--from-zero-point", str(szp), "--zero-point", str(dzp)])
    got = unnibble(got, q.size, d == "i4") if d in ("i4", "u4") else \
        np.frombuffer(got, STORAGE[d]).astype(np.int64)
    want = np.clip(q - szp + dzp, *RANGE[d])
    check(np.array_equal(got, want), f"{s} zp {szp} -> {d} zp {dzp}")


def blocked():
    """A cast fused into blocking: NCHW f32 -> NC1HWC0 f16 (C0 16) and i8
    (C0 32, padding the zero point), against numpy's pad, reshape,
    transpose and cast."""
    n, c, h, w = 2, 17, 5, 3
    x = rng.standard_normal((n, c, h, w)).astype(np.float32) * 3
    for d, c0, extra in (("f16", 16, []),
                         ("i8", 32, ["--scale", "0.05", "--zero-point", "3"])):
        got = run(x.tobytes(), "f32", d, 0, extra, ("NCHW", "NC1HWC0"),
                  "x".join(map(str, x.shape)))
        c1 = -(-c // c0)
        if d == "f16":
            y = x.astype(np.float16)
            pad = 0
        else:
            y = np.clip(np.rint(x.astype(np.float64) / np.float32(0.05)) + 3,
                        -128, 127).astype(np.int8)
            pad = 3
        full = np.full((n, c1 * c0, h, w), pad, y.dtype)
        full[:, :c] = y
        want = full.reshape(n, c1, c0, h, w).transpose(0, 1, 3, 4, 2)
        check(got == want.tobytes(), f"NCHW f32 -> NC1HWC0 {d}")


def fractal_z(full, c0, n0=16):
    """An (N, C, H, W) array padded to whole blocks, as FRACTAL_Z lays it
    out: (C1*H*W, N1, N0, C0)."""
    n, c, h, w = full.shape
    return full.reshape(n // n0, n0, c // c0, c0, h, w).transpose(
        2, 4, 5, 0, 1, 3).reshape(-1, n // n0, n0, c0)


def per_channel():
    """Per-channel quantization (--scale/--zero-point .npy files, --axis):
    NCHW f32 -> FRACTAL_Z i8 along N with zero points, NCHW f16 ->
    NC1HWC0 u8 along C (the channel padding the integer 0), and back to f32
    and bf16 along N, against numpy's formulas; the CPU device's bytes equal
    the reference's. Then the refusals."""
    n, c, h, w = 20, 3, 3, 3
    x = (rng.standard_normal((n, c, h, w)) * 3).astype(np.float32)
    x.reshape(-1)[::7] = np.array([np.nan, np.inf, -np.inf, -0.0, 1e-45],
                                  np.float32)[np.arange(x.size)[::7] % 5]
    scales = (np.nanmax(np.where(np.isinf(x), 0, np.abs(x)).reshape(n, -1), 1)
              / 127).astype(np.float32)
    zps = (np.arange(n) % 7 - 3).astype(np.int32)
    np.save(TMP / "scales.npy", scales)
    np.save(TMP / "zps.npy", zps)
    shape = "x".join(map(str, x.shape))
    quant = ["--scale", str(TMP / "scales.npy"), "--zero-point",
             str(TMP / "zps.npy"), "--axis", "N"]
    got = run(x.tobytes(), "f32", "i8", 0, quant, ("NCHW", "FRACTAL_Z"), shape)
    sc, zp = (v[:, None, None, None] for v in (scales, zps))
    q = np.where(np.isnan(x), zp, np.clip(
        np.rint(x.astype(np.float64) / sc.astype(np.float64)) + zp, -128, 127))
    full = np.zeros((32, 32, h, w), np.int8)
    full[:n, :c] = q
    check(got == fractal_z(full, 32).tobytes(),
          "NCHW f32 -> FRACTAL_Z i8 per channel along N")
    back = np.frombuffer(run(got, "i8", "f32", 0, [
        "--from-scale", str(TMP / "scales.npy"), "--from-zero-point",
        str(TMP / "zps.npy"), "--axis", "N", "--dims", f"N={n},C={c},H={h},W={w}"],
        ("FRACTAL_Z", "NCHW"), "x".join(map(str, fractal_z(full, 32).shape))),
        np.float32).reshape(x.shape)
    want = ((q - zp) * sc.astype(np.float64)).astype(np.float32)
    check(np.array_equal(back.view(np.uint32), want.view(np.uint32)),
          "FRACTAL_Z i8 -> NCHW f32 per channel along N: (q - zp) * scale")
    bf = np.frombuffer(run(got, "i8", "bf16", 0, [
        "--from-scale", str(TMP / "scales.npy"), "--from-zero-point",
        str(TMP / "zps.npy"), "--axis", "N", "--dims", f"N={n},C={c},H={h},W={w}"],
        ("FRACTAL_Z", "NCHW"), "x".join(map(str, fractal_z(full, 32).shape))),
        np.uint16)
    exact = ((q - zp) * sc.astype(np.float64)).reshape(-1)
    check(bf.tolist() == [exact_round(v, 7, 8) for v in exact],
          "FRACTAL_Z i8 -> NCHW bf16 per channel along N")
    # along C into NC1HWC0 u8: C = 3 pads to 32 with the integer 0
    y = x[:2, :, :, :].astype(np.float16)
    cs = np.array([0.5, 0.0371, 2.0], np.float32)
    np.save(TMP / "cs.npy", cs)
    got = run(y.tobytes(), "f16", "u8", 0, [
        "--scale", str(TMP / "cs.npy"), "--zero-point", "128", "--axis", "c"],
        ("NCHW", "NC1HWC0"), "x".join(map(str, y.shape)))
    yf = y.astype(np.float64)
    q = np.where(np.isnan(yf), 128, np.clip(
        np.rint(yf / cs[None, :, None, None].astype(np.float64)) + 128, 0, 255))
    full = np.zeros((2, 32, h, w), np.uint8)
    full[:, :c] = q
    check(got == full.reshape(2, 1, 32, h, w).transpose(0, 1, 3, 4, 2)
          .tobytes(), "NCHW f16 -> NC1HWC0 u8 per channel along C, zero "
          "point 128 for all, padding 0")
    # refusals, each naming what was wrong
    np.save(TMP / "f64.npy", np.full(n, 0.1))
    np.save(TMP / "zero.npy", np.where(np.arange(n) == 4, 0, scales))
    np.save(TMP / "short.npy", scales[:5])
    np.save(TMP / "zpbig.npy", np.full(n, 300, np.int64))
    (TMP / "in.npy").write_bytes(b"")
    np.save(TMP / "x.npy", x)
    for extra, message in (
            (["--scale", str(TMP / "f64.npy"), "--axis", "N"],
             "value 0 is not an f32 value"),
            (["--scale", str(TMP / "zero.npy"), "--axis", "N"],
             "scale 4 is 0"),
            (["--scale", str(TMP / "short.npy"), "--axis", "N"],
             "needs a 1-D array of 20 f32 values"),
            (["--scale", "0.5", "--zero-point", str(TMP / "zpbig.npy"),
              "--axis", "N"], "zero point 0 is 300, outside i8's range"),
            (["--scale", str(TMP / "scales.npy")], "need --axis"),
            (["--scale", str(TMP / "scales.npy"), "--axis", "Q"],
             "need --axis, a logical dim of the layout"),
            (["--scale", "0.5", "--axis", "N"], "--axis names the dim"),
            (["--scale", str(TMP / "missing.npy"), "--axis", "N"],
             "missing.npy")):
        out = TMP / "refused.npy"
        r = subprocess.run([RELAYOUT, "convert", "--from", "NCHW", "--to",
                            "FRACTAL_Z", "--to-dtype", "i8", *extra,
                            str(TMP / "x.npy"), str(out)],
                           capture_output=True, text=True)
        check(r.returncode == 2 and message in r.stderr and not out.exists(),
              f"refused: {' '.join(extra)}: {r.stderr.strip()}")
    # an ND dim by its index, and nothing but an index
    np.save(TMP / "nd.npy", x.reshape(n, -1))
    for axis, ok in (("0", True), ("0x", False), ("00", True)):
        r = subprocess.run([RELAYOUT, "convert", "--from", "ND", "--to", "ND",
                            "--to-dtype", "i8", "--scale",
                            str(TMP / "scales.npy"), "--axis", axis,
                            str(TMP / "nd.npy"), str(TMP / "nd-q.npy")],
                           capture_output=True, text=True)
        check((r.returncode == 0) == ok,
              f"ND --axis {axis}: {'taken' if ok else 'refused'} "
              f"({r.stderr.strip()})")


for s in FLOAT:
    for d in FLOAT:
        if s != d:
            float_to_float(s, d)
for s in ("f32", "f16", "bf16"):
    for d, scale, zp in (("i8", 0.5, 0), ("i8", 0.0371, -7), ("u8", 0.25, 128),
                         ("i4", 0.5, 1), ("u4", 0.1, 8)):
        quantize(s, d, scale, zp)
for s, scale, zp in (("i8", 0.0371, -7), ("u8", 0.25, 128), ("i4", 1.5, 1),
                     ("u4", 3e-3, 8)):
    for d in FLOAT:
        dequantize(s, d, scale, zp)
for s, d, szp, dzp in (("u8", "i8", 128, 0), ("i8", "u8", 0, 128),
                       ("i8", "i8", 0, 5), ("i8", "u4", 0, 0),
                       ("u4", "i8", 8, 0)):
    integer(s, d, szp, dzp)
blocked()
per_channel()
finish()
