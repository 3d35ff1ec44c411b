#!/usr/bin/env python3
"""test_svg.py RELAYOUT - relayout explain --svg: the picture parses as XML,
holds one cell per buffer element labelled with the logical coordinate that
the seeds' formulas (written here, independently of the library) put at its
offset, padding marked; --values labels the logical index; a large layout
is elided to a small file, a huge one refused; rsvg-convert renders it at
the size it declares; the README's picture is what the command draws."""
import os
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, finish  # noqa: E402

RELAYOUT = sys.argv[1]
TMP = tempfile.mkdtemp(prefix="relayout-svg-")
NS = "{http://www.w3.org/2000/svg}"


def draw(layout, shape, dtype, *extra):
    path = os.path.join(TMP, "p.svg")
    r = subprocess.run([RELAYOUT, "explain", layout, "--shape", shape,
                        "--dtype", dtype, "--svg", path, *extra],
                       capture_output=True, text=True)
    return r, path


def cells(path):
    root = ET.parse(path).getroot()
    return root, {int(c.get("data-offset")): (c.get("class"),
                                              c.get("data-label"))
                  for c in root.iter(NS + "rect")}


def cdiv(a, b):
    return -(-a // b)


def nz_f16(m, n, M, N):
    """Seed 000: (M, N) -> (N1, M1, M0=16, N0=16)."""
    return ((n // 16 * cdiv(M, 16) + m // 16) * 16 + m % 16) * 16 + n % 16


def nchw8c(n, c, h, w, C, H, W):
    """Seed 001: nChw8c, C padded to a multiple of 8."""
    return (n * cdiv(C, 8) * H * W * 8 + c // 8 * H * W * 8 + h * W * 8 +
            w * 8 + c % 8)


def expect(formula, extents, span, values=False):
    want = {o: ("padding", "") for o in range(span)}
    total = 1
    for e in extents:
        total *= e
    for flat in range(total):
        coord, rest = [], flat
        for e in reversed(extents):
            coord.insert(0, rest % e)
            rest //= e
        label = str(flat) if values else ",".join(map(str, coord))
        want[formula(*coord)] = ("data", label)
    return want


M, N = 20, 28
r, path = draw("FRACTAL_NZ", f"{M}x{N}", "f16")
check(r.returncode == 0, f"NZ 20x28 drawn: {r.stderr}")
root, got = cells(path)
want = expect(lambda m, n: nz_f16(m, n, M, N), [M, N], 1024)
check(got == want, "NZ 20x28 f16: 1024 cells, each labelled with the "
      f"coordinate seed 000's formula puts there ({len(got)} cells, "
      f"{sum(got.get(o) != w for o, w in want.items())} differ)")
check(root.get("width") and root.get("height"), "the picture declares its size")
r, path = draw("FRACTAL_NZ", f"{M}x{N}", "f16", "--values")
root, got = cells(path)
check(got == expect(lambda m, n: nz_f16(m, n, M, N), [M, N], 1024, True),
      "--values: the logical index, as the seed's table prints it")

C, H, W = 17, 2, 3
r, path = draw("nChw8c", f"2x{C}x{H}x{W}", "f32")
_, got = cells(path)
want = expect(lambda n, c, h, w: nchw8c(n, c, h, w, C, H, W), [2, C, H, W],
              2 * 24 * H * W)
check(got == want, "nChw8c C=17: seed 001's offsets, C's tail padding")

r, path = draw("NCHW16c", "1x64x64x64", "f32")
root, got = cells(path)
text = "".join(root.itertext())
check(r.returncode == 0 and os.path.getsize(path) < 1 << 20 and
      len(got) == 64 * 16 and "not drawn" in text,
      f"a large layout: the first 64 rows drawn, the rest counted "
      f"({os.path.getsize(path)} bytes, {len(got)} cells)")
r, path = draw("ND", "10000x10000", "f32")
check(r.returncode == 1 and "too many to draw" in r.stderr,
      f"a huge one refused: {r.stderr.strip()}")
r = subprocess.run([RELAYOUT, "explain", "NCHW", "--shape", "1x2x3x4",
                    "--values"], capture_output=True, text=True)
check(r.returncode == 2 and "--values labels a --svg" in r.stderr,
      "--values without --svg is refused")

# Seed 004's 128-byte aligned fp32 (N=2, C=3, H=4, W=5) on 4 NPUs of 1024
# bytes: channel c on NPU (start + c) % 4, a band per NPU.
def tpu_aligned(start):
    per_npu = cdiv(start + 3, 4)
    return lambda n, c, h, w: ((start + c) % 4 * 256 + n * 32 * per_npu +
                               (start + c) // 4 * 32 + h * 5 + w)


for start in (0, 2):
    r, path = draw(f"TPU_ALIGNED(npus=4,lmem=1024,start={start})", "2x3x4x5",
                   "f32")
    root, got = cells(path)
    want = expect(tpu_aligned(start), [2, 3, 4, 5], 1024)
    drawn = {o: v for o, v in want.items() if o in got}
    data_lanes = {o // 256 for o, v in got.items() if v[0] == "data"}
    check(r.returncode == 0 and got == drawn and
          data_lanes == {(start + c) % 4 for c in range(3)},
          f"TPU_ALIGNED start={start}: every drawn element where seed 004 "
          f"puts it, channels on their NPUs ({r.stderr.strip()})")
    lanes = [t.text for t in root.iter(NS + "text")
             if (t.text or "").startswith("lane ")]
    check(lanes == ["lane 0", "lane 1", "lane 2", "lane 3"],
          f"start={start}: a band per NPU: {lanes}")

# A pair: both buffers, and the paths of the first, last, middle and
# last row's first elements from ND's offsets to FRACTAL_NZ's.
path = os.path.join(TMP, "pair.svg")
r = subprocess.run([RELAYOUT, "explain", "--from", "ND", "--to", "FRACTAL_NZ",
                    "--shape", f"{M}x{N}", "--dtype", "f16", "--svg", path],
                   capture_output=True, text=True)
check(r.returncode == 0, f"a pair drawn: {r.stderr}")
root = ET.parse(path).getroot()
moves = {(int(p.get("data-from")), int(p.get("data-to")))
         for p in root.iter(NS + "path")}
want = {(m * N + n, nz_f16(m, n, M, N))
        for m, n in ((0, 0), (M - 1, N - 1), (M // 2, N // 2), (M - 1, 0))}
check(moves == want, f"the paths go from ND's offsets to NZ's: {moves}")
check(len(list(root.iter(NS + "rect"))) == M * N + 1024,
      "both buffers drawn, a cell per element")
r = subprocess.run([RELAYOUT, "explain", "--from", "ND", "--shape", "2x3",
                    "--svg", path], capture_output=True, text=True)
check(r.returncode == 2 and "--from and --to draw a pair" in r.stderr,
      "--from without --to is refused")

rsvg = shutil.which("rsvg-convert")
check(rsvg is not None, "rsvg-convert (Debian librsvg2-bin) is installed")
if rsvg:
    r, path = draw("FRACTAL_NZ", f"{M}x{N}", "f16")
    root = ET.parse(path).getroot()
    png = os.path.join(TMP, "p.png")
    ok = subprocess.run([rsvg, path, "-o", png]).returncode == 0
    head = open(png, "rb").read(24) if ok else b""
    size = (int.from_bytes(head[16:20], "big"),
            int.from_bytes(head[20:24], "big"))
    check(ok and head[:8] == b"\x89PNG\r\n\x1a\n" and
          size == (int(root.get("width")), int(root.get("height"))),
          f"rendered by rsvg-convert to a PNG of its size: {size}")

readme = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                      "docs", "pictures", "fractal_nz_20x28_f16.svg")
r, path = draw("FRACTAL_NZ", f"{M}x{N}", "f16")
check(open(readme).read() == open(path).read(),
      "docs/pictures/fractal_nz_20x28_f16.svg is what explain --svg draws "
      "(regenerate it with: relayout explain FRACTAL_NZ --shape 20x28 "
      "--dtype f16 --svg docs/pictures/fractal_nz_20x28_f16.svg)")
shutil.rmtree(TMP)
finish()
