"""test_relayout.py - the Python package against numpy's own formulas.

Each conversion's expected array is built here with numpy (pad, reshape,
transpose, astype) from the layouts' definitions in docs/LAYOUTS.md, never
from relayout; every conversion runs on the CPU device (PoCL) and on the
reference. RELAYOUT_TEST_DEVICE picks another device for the first.
"""
import gc
import os
import re
from pathlib import Path

import numpy as np
import pytest

import relayout

DEVICES = [os.environ.get("RELAYOUT_TEST_DEVICE", "cpu"), "ref"]
rng = np.random.default_rng(5)


def pad_to(x, axis, multiple, value=0):
    extra = -x.shape[axis] % multiple
    width = [(0, 0)] * x.ndim
    width[axis] = (0, extra)
    return np.pad(x, width, constant_values=value)


def nc1hwc0(x, c0):
    n, c, h, w = x.shape
    x = pad_to(x, 1, c0)
    return x.reshape(n, -1, c0, h, w).transpose(0, 1, 3, 4, 2)


def fractal_nz(x):
    """ND (M, N) -> (N1, M1, M0, N0), 16x16 fractals for 2-byte types."""
    x = pad_to(pad_to(x, 0, 16), 1, 16)
    m, n = x.shape
    return x.reshape(m // 16, 16, n // 16, 16).transpose(2, 0, 1, 3)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype,c0", [(np.float16, 16), (np.float32, 16),
                                      (np.int8, 32), (np.uint8, 32)])
def test_nc1hwc0_there_and_back(device, dtype, c0):
    x = rng.integers(-100, 100, (2, 17, 5, 3)).astype(dtype)
    y = relayout.convert(x, "NCHW", "NC1HWC0", device=device)
    assert y.dtype == dtype and np.array_equal(y, nc1hwc0(x, c0))
    back = relayout.convert(y, "NC1HWC0", "NCHW", device=device,
                            dims={"C": 17})
    assert np.array_equal(back, x)


@pytest.mark.parametrize("device", DEVICES)
def test_formats_against_numpy(device):
    x = rng.standard_normal((3, 20, 7, 9)).astype(np.float32)
    assert np.array_equal(relayout.convert(x, "NCHW", "NHWC", device=device),
                          x.transpose(0, 2, 3, 1))
    want = pad_to(x, 1, 16).reshape(3, 2, 16, 7, 9).transpose(0, 1, 3, 4, 2)
    assert np.array_equal(
        relayout.convert(x, "NCHW", "nChw16c", device=device), want)
    m = rng.standard_normal((37, 45)).astype(np.float16)
    assert np.array_equal(
        relayout.convert(m, "ND", "FRACTAL_NZ", device=device), fractal_nz(m))
    assert np.array_equal(relayout.convert(m, "MN", "NM", device=device), m.T)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.filterwarnings("ignore:overflow")
def test_casts_against_numpy(device):
    x = np.concatenate([rng.standard_normal(1000) * 1000,
                        [np.inf, -np.inf, 0.0, -0.0, 65504, 65520, 1e-7,
                         6e-8]]).astype(np.float32).reshape(1, -1, 1, 1)
    y = relayout.convert(x, "NCHW", "NC1HWC0", device=device, to_dtype="f16")
    assert y.dtype == np.float16
    assert np.array_equal(y, nc1hwc0(x.astype(np.float16), 16))
    q = relayout.convert(x[:, :1000], "NCHW", "NCHW", device=device,
                         to_dtype="i8", scale=7.5, zero_point=-3)
    want = np.clip(np.rint(x[:, :1000].astype(np.float64) / 7.5) - 3, -128,
                   127).astype(np.int8)
    assert np.array_equal(q, want)
    d = relayout.convert(q, "NCHW", "NCHW", device=device, to_dtype="f32",
                         from_scale=7.5, from_zero_point=-3)
    assert np.array_equal(d, ((want.astype(np.float64) + 3) * 7.5)
                          .astype(np.float32))


@pytest.mark.parametrize("device", ["ref", "cpu"])
def test_per_channel_against_numpy(device):
    x = (rng.standard_normal((2, 19, 3, 5)) * 4).astype(np.float32)
    scales = (np.abs(x).max(axis=(0, 2, 3)) / 127).astype(np.float32)
    zps = (np.arange(19) % 5 - 2).astype(np.int32)
    q = relayout.convert(x, "NCHW", "NC1HWC0", device=device, to_dtype="i8",
                         scale=scales, zero_point=zps, axis="C")
    c = (None, slice(None), None, None)
    want = np.clip(np.rint(x.astype(np.float64) / scales[c]) + zps[c], -128,
                   127).astype(np.int8)
    assert np.array_equal(q, nc1hwc0(want, 32))  # padding: the integer 0
    d = relayout.convert(q, "NC1HWC0", "NCHW", device=device, dims={"C": 19},
                         to_dtype="f32", from_scale=scales,
                         from_zero_point=zps, axis="C")
    assert np.array_equal(d, ((want.astype(np.float64) - zps[c])
                              * scales[c]).astype(np.float32))
    with pytest.raises(relayout.Error, match="need axis"):
        relayout.convert(x, "NCHW", "NCHW", to_dtype="i8", scale=scales)
    with pytest.raises(relayout.Error, match="3 scales for an extent of 19"):
        relayout.convert(x, "NCHW", "NCHW", to_dtype="i8", scale=scales[:3],
                         axis="C")


def test_explain():
    e = relayout.Layout("NC1HWC0").explain([2, 17, 5, 3], "f16")
    assert e["shape"] == (2, 2, 5, 3, 16)
    assert e["bytes"] == 2 * 32 * 5 * 3 * 2
    assert e["padding"] == {"C": {"valid": 17, "padded": 32, "before": 0}}
    assert [(a["dim"], a["extent"], a["stride"]) for a in e["axes"]] == [
        ("N", 2, 480), ("C", 2, 240), ("H", 5, 48), ("W", 3, 16),
        ("C", 16, 1)]
    assert relayout.Layout("nChw16c").logical_names() == "NCHW"


def test_tpu_local_memory():
    # seed 004's strides (W 2, H 16, C 56, N 120; 4 NPUs of 256 fp32), the
    # tensor 64 bytes into its NPU: numpy's placement, and back
    x = np.arange(2 * 5 * 3 * 4, dtype=np.float32).reshape(2, 5, 3, 4) + 1
    to = ("TPU_STRIDED(npus=4,lmem=1024,offset=64,wstride=2,hstride=16,"
          "cstride=56,nstride=120)")
    e = relayout.Layout(to).explain([2, 5, 3, 4])
    assert e["base"] == 16
    want = np.zeros(e["bytes"] // 4, np.float32)
    n, c, h, w = np.indices(x.shape)
    want[c % 4 * 256 + 16 + n * 120 + c // 4 * 56 + h * 16 + w * 2] = x
    for device in ("ref", "cpu"):
        y = relayout.convert(x, "NCHW", to, device=device)
        assert y.tobytes() == want.tobytes()
        back = relayout.convert(y, to, "NCHW", device=device,
                                dims={"N": 2, "C": 5, "H": 3, "W": 4})
        assert np.array_equal(back, x)


def test_attention_layouts():
    # seed 000: BSH's H is N * D; BSH -> BNSD is numpy's reshape and
    # transpose, SBH numpy's transpose of B and S
    x = np.arange(2 * 5 * 24, dtype=np.float16).reshape(2, 5, 24)
    for device in ("ref", "cpu"):
        y = relayout.convert(x, "BSH(heads=4)", "BNSD", device=device)
        assert np.array_equal(y, x.reshape(2, 5, 4, 6).transpose(0, 2, 1, 3))
        z = relayout.convert(y, "BNSD", "SBH", device=device)
        assert np.array_equal(z, x.transpose(1, 0, 2))
    assert np.array_equal(
        relayout.convert(x, "BSH", "BNSD", device="ref", dims={"N": 4}), y)
    with pytest.raises(relayout.Error, match="give heads="):
        relayout.convert(x, "BSH", "BNSD", device="ref")
    with pytest.raises(relayout.Error, match="not a multiple of heads=5"):
        relayout.convert(x, "BSH(heads=5)", "BNSD", device="ref")


def test_fractal_z_c04():
    # CANN's first-layer weight: K = (h * W + w) * 4 + c over the channels
    # padded to 4, numpy's pad, transpose and reshape
    x = rng.standard_normal((18, 3, 3, 5)).astype(np.float16)
    p = pad_to(pad_to(x, 0, 16), 1, 4)               # N to 16, C to 4
    n, c, h, w = p.shape
    k = p.transpose(0, 2, 3, 1).reshape(n, h * w * 4)  # n, K
    k = pad_to(k, 1, 16)
    want = k.reshape(n // 16, 16, -1, 16).transpose(2, 0, 1, 3)
    for device in ("ref", "cpu"):
        y = relayout.convert(x, "NCHW", "FRACTAL_Z_C04", device=device)
        assert y.shape == (4, 2, 16, 16) and np.array_equal(y, want)
        back = relayout.convert(y, "FRACTAL_Z_C04", "NCHW", device=device,
                                dims={"N": 18, "C": 3, "H": 3, "W": 5})
        assert np.array_equal(back, x)
    with pytest.raises(relayout.Error, match="at most 4 channels"):
        relayout.convert(np.zeros((2, 5, 1, 1), np.float16), "NCHW",
                         "FRACTAL_Z_C04", device="ref")


def test_rnn_formats():
    # an LSTM's stacked weight (input 20 + hidden 5 rows, 4 gates of 5):
    # each gate padded to 16, the input and hidden rows padded apart, each
    # part FRACTAL_ZN's (K1, N1, 16, 16) with K innermost
    x = rng.standard_normal((25, 20)).astype(np.float16)

    def zn(rows):
        g = pad_to(rows.reshape(rows.shape[0], 4, 5), 2, 16).reshape(
            rows.shape[0], 64)
        g = pad_to(g, 0, 16)
        return g.reshape(-1, 16, 4, 16).transpose(0, 2, 3, 1)

    want = np.concatenate([zn(x[:20]), zn(x[20:])])
    fmt = "FRACTAL_ZN_RNN(input=20,hidden=5)"
    for device in ("ref", "cpu"):
        y = relayout.convert(x, "ND", fmt, device=device)
        assert y.shape == (3, 4, 16, 16) and np.array_equal(y, want)
        back = relayout.convert(y, fmt, "ND", device=device,
                                dims={"K": 25, "N": 20})
        assert np.array_equal(back, x)
    b = rng.standard_normal(20).astype(np.float32)
    y = relayout.convert(b, "ND", "ND_RNN_BIAS(hidden=5)", device="cpu")
    assert np.array_equal(y, pad_to(b.reshape(4, 5), 1, 16).reshape(64))
    with pytest.raises(relayout.Error, match="needs input= and hidden="):
        relayout.convert(x, "ND", "FRACTAL_ZN_RNN", device="ref")
    with pytest.raises(relayout.Error, match="neither input=20"):
        relayout.convert(x[:24], "ND", fmt, device="ref")


def test_errors():
    with pytest.raises(relayout.Error) as e:
        relayout.Layout("NCHW16")
    assert e.value.status == "RELAYOUT_ERR_SYNTAX" and "NCHW16" in str(e.value)
    y = np.zeros((2, 2, 5, 3, 16), np.float16)
    with pytest.raises(relayout.Error, match="--dims|C"):
        relayout.convert(y, "NC1HWC0", "NCHW", device="ref")
    with pytest.raises(relayout.Error, match="no cast from f32 to i32"):
        relayout.convert(np.zeros((2, 3), np.float32), "ND", "ND",
                         device="ref", to_dtype="i32")
    with pytest.raises(relayout.Error, match="complex64"):
        relayout.convert(np.zeros((2, 3), np.complex64), "ND", "ND")
    with pytest.raises(relayout.Error, match="positive and finite"):
        relayout.convert(np.zeros((2, 3), np.float32), "ND", "ND",
                         to_dtype="i8", scale=0.0)
    plan = relayout.Engine("ref").plan("ND", "ND", (2, 3), "f32")
    with pytest.raises(relayout.Error, match="takes"):
        plan.run(np.zeros((3, 2), np.float32))


def test_engine_plans_and_batches():
    engine = relayout.Engine("cpu")
    plan = engine.plan("NCHW", "NHWC", (2, 3, 4, 5), "f32")
    assert plan.dst_shape == (2, 4, 5, 3) and plan.family != "reference"
    x = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
    out = np.empty(plan.dst_shape, np.float32)
    assert plan.run(x, out=out) is out
    assert np.array_equal(out, x.transpose(0, 2, 3, 1))
    assert engine.plan("NCHW", "NHWC", (2, 3, 4, 5), "f32") is plan
    items = [(rng.standard_normal((2, 17, 5, 3)).astype(np.float16), "NCHW",
              "NC1HWC0"),
             (rng.standard_normal((33, 40)).astype(np.float16), "ND",
              "FRACTAL_NZ"),
             (x, "NCHW", "NHWC")]
    got = engine.convert_many(items)
    assert np.array_equal(got[0], nc1hwc0(items[0][0], 16))
    assert np.array_equal(got[1], fractal_nz(items[1][0]))
    assert np.array_equal(got[2], x.transpose(0, 2, 3, 1))


def test_cached_kernels(tmp_path):
    # "cached" runs the generic kernel until a build by another engine is in
    # the cache, then that one; it builds and stores nothing itself
    x = rng.standard_normal((2, 40, 6, 5)).astype(np.float32)
    want = nc1hwc0(x, 16)
    cache = str(tmp_path)
    cold = relayout.Engine("cpu", "cached", cache).plan("NCHW", "NC1HWC0",
                                                       x.shape, "f32")
    assert cold.kernel == "generic" and np.array_equal(cold.run(x), want)
    assert os.listdir(cache) == []
    engine = relayout.Engine("cpu", "specialised", cache)
    built = engine.plan("NCHW", "NC1HWC0", x.shape, "f32")
    kernel = built.kernel
    del built, engine  # its binary is stored once built, by the engine's end
    gc.collect()
    assert kernel != "generic" and os.listdir(cache)
    warm = relayout.Engine("cpu", "cached", cache).plan("NCHW", "NC1HWC0",
                                                       x.shape, "f32")
    assert warm.kernel == kernel and np.array_equal(warm.run(x), want)
    with pytest.raises(relayout.Error, match="cached"):
        relayout.Engine("cpu", "fastest")


def test_dlpack_and_views():
    x = rng.standard_normal((4, 6)).astype(np.float32)
    assert np.array_equal(relayout.convert(x.T, "MN", "NM"), x)  # a view
    bits = x.view(np.uint32)
    y = relayout.convert(bits, "MN", "NM", dtype="f32")  # read as f32
    assert y.dtype == np.float32 and np.array_equal(y.view(np.uint32), bits.T)


def test_torch():
    torch = pytest.importorskip("torch", reason="torch is not importable")
    t = torch.randn(2, 17, 5, 3)
    y = relayout.convert(t, "NCHW", "NC1HWC0")
    assert np.array_equal(y, nc1hwc0(t.numpy(), 16))
    b = t.to(torch.bfloat16)
    z = relayout.convert(b, "NCHW", "NC1HWC0", to_dtype="f32")
    assert np.array_equal(z, nc1hwc0(b.to(torch.float32).numpy(), 16))


def test_version_is_the_headers():
    header = (Path(__file__).parents[2] / "include" / "relayout.h").read_text()
    parts = [re.search(rf"#define RELAYOUT_VERSION_{p} (\d+)", header)[1]
             for p in ("MAJOR", "MINOR", "PATCH")]
    assert relayout.__version__ == ".".join(parts)


def test_readme_example(capsys):
    readme = (Path(__file__).parents[2] / "README.md").read_text()
    exec(re.search(r"```python\n(.*?)```", readme, re.S)[1], {})
    assert capsys.readouterr().out.strip() == "(2, 2, 16, 16)"


def fractal_z(x):
    """NCHW (N, C, H, W) -> FRACTAL_Z (C1*H*W, N1, N0, C0), 2-byte types."""
    x = pad_to(pad_to(x, 0, 16), 1, 16)
    n, c, h, w = x.shape
    x = x.reshape(n // 16, 16, c // 16, 16, h, w)  # n1 n0 c1 c0 h w
    return x.transpose(2, 4, 5, 0, 1, 3).reshape(-1, n // 16, 16, 16)


def test_repack_safetensors(tmp_path):
    st = pytest.importorskip("safetensors.numpy",
                             reason="the safetensors package is not installed")
    tensors = {
        "conv.weight": rng.standard_normal((20, 17, 3, 3)).astype(np.float16),
        "fc.weight": rng.standard_normal((33, 70)).astype(np.float32),
        "fc.bias": rng.standard_normal(33).astype(np.float32),
    }
    src, npu, back = (tmp_path / n for n in ("m.safetensors",
                                               "npu.safetensors",
                                               "back.safetensors"))
    st.save_file(tensors, str(src))
    summary = relayout.repack(src, npu, ["*.weight:4d=FRACTAL_Z",
                                         "*:2d=FRACTAL_NZ:f16"],
                              device=DEVICES[0])
    assert {t["name"] for t in summary["tensors"]} == set(tensors)
    got = st.load_file(str(npu))  # read back by the safetensors package
    np.testing.assert_array_equal(got["conv.weight"],
                                  fractal_z(tensors["conv.weight"]))
    np.testing.assert_array_equal(
        got["fc.weight"], fractal_nz(tensors["fc.weight"].astype(np.float16)))
    np.testing.assert_array_equal(got["fc.bias"], tensors["fc.bias"])
    relayout.restore(npu, back, device=DEVICES[0])
    restored = st.load_file(str(back))
    assert restored["conv.weight"].tobytes() == \
        tensors["conv.weight"].tobytes()
    np.testing.assert_array_equal(  # narrowed to f16: at its precision
        restored["fc.weight"],
        tensors["fc.weight"].astype(np.float16).astype(np.float32))
    assert restored["fc.weight"].dtype == np.float32


def test_repack_errors(tmp_path):
    with pytest.raises(relayout.Error) as e:
        relayout.repack(tmp_path / "none.safetensors", tmp_path / "o",
                        ["*:2d=NOT_A_FORMAT"])
    assert e.value.status == "EXIT_USAGE" and "NOT_A_FORMAT" in str(e.value)
    with pytest.raises(relayout.Error) as e:
        relayout.restore(tmp_path / "none.safetensors", tmp_path / "o")
    assert e.value.status == "EXIT_WORK" and "none.safetensors" in str(e.value)
    assert not (tmp_path / "o").exists()


NV12_JPEG = """aipp_op {
  input_format : YUV420SP_U8
  src_image_size_w : 40
  src_image_size_h : 6
  csc_switch : true
  matrix_r0c0 : 256
  matrix_r0c1 : 0
  matrix_r0c2 : 359
  matrix_r1c0 : 256
  matrix_r1c1 : -88
  matrix_r1c2 : -183
  matrix_r2c0 : 256
  matrix_r2c1 : 454
  matrix_r2c2 : 0
  input_bias_1 : 128
  input_bias_2 : 128
  mean_chn_0 : 123
  mean_chn_1 : 117
  mean_chn_2 : 104
  var_reci_chn_0 : 0.0171
  var_reci_chn_1 : 0.0175
  var_reci_chn_2 : 0.0174
}
"""


def aipp_nv12(frames, n, w, h):
    """AIPP's steps on n NV12 frames, written out here in numpy from
    docs/PREPROCESS.md: the JPEG matrix above in integers (>> 8 towards
    minus infinity, clamped), then (x - mean) * var_reci in f32."""
    f = frames.reshape(n, h * 3 // 2, w).astype(np.int64)
    y = f[:, :h]
    uv = f[:, h:].reshape(n, h // 2, w // 2, 2)
    u = uv[..., 0].repeat(2, 1).repeat(2, 2) - 128
    v = uv[..., 1].repeat(2, 1).repeat(2, 2) - 128
    m = [[256, 0, 359], [256, -88, -183], [256, 454, 0]]
    rgb = [np.clip((m[i][0] * y + m[i][1] * u + m[i][2] * v) >> 8, 0, 255)
           for i in range(3)]
    mean = np.float32([123, 117, 104])
    var = np.float32([0.0171, 0.0175, 0.0174])
    return np.stack([(c.astype(np.float32) - mean[i]) * var[i]
                     for i, c in enumerate(rgb)], 1)


@pytest.mark.parametrize("device", DEVICES)
def test_preprocess_nv12_to_nc1hwc0(device):
    n, w, h = 3, 40, 6
    frames = rng.integers(0, 256, n * w * h * 3 // 2, dtype=np.uint8)
    want = aipp_nv12(frames, n, w, h)
    got = relayout.preprocess(frames, NV12_JPEG, to="NC1HWC0", dtype="f16",
                              device=device)
    assert got.shape == (n, 1, h, w, 16) and got.dtype == np.float16
    assert np.array_equal(got, nc1hwc0(want.astype(np.float16), 16))
    got32 = relayout.preprocess(frames.reshape(n, -1), NV12_JPEG, to="NCHW",
                                dtype="f32", device=device)
    assert np.array_equal(got32, want)


def test_preprocessing_plan_and_errors():
    plan = relayout.Engine("cpu").preprocessing(NV12_JPEG, 2, to="NHWC",
                                                dtype="u8", quant_scale=0.25,
                                                quant_zero_point=3)
    frames = rng.integers(0, 256, 2 * 40 * 9, dtype=np.uint8)
    want = np.clip(np.round(aipp_nv12(frames, 2, 40, 6).astype(np.float64) /
                            0.25) + 3, 0, 255).astype(np.uint8)
    assert plan.dst_shape == (2, 6, 40, 3) and plan.note == ""
    assert np.array_equal(plan.run(frames), want.transpose(0, 2, 3, 1))
    with pytest.raises(relayout.Error, match="the plan takes 2 frames"):
        plan.run(frames[:360])
    with pytest.raises(relayout.Error, match="not a whole number"):
        relayout.preprocess(frames[:-1], NV12_JPEG, device="ref")
    with pytest.raises(relayout.Error, match="quantize an i8 or u8"):
        relayout.preprocess(frames, NV12_JPEG, dtype="f16", quant_scale=0.5,
                            device="ref")
    with pytest.raises(relayout.Error, match="uint8"):
        relayout.preprocess(frames.astype(np.int16), NV12_JPEG, device="ref")
    with pytest.raises(relayout.Error, match=r"line 2.*resize"):
        relayout.preprocess(frames, "aipp_op {\n resize : true\n}\n",
                            device="ref")


@pytest.mark.parametrize("device", DEVICES)
def test_preprocess_normalize(device):
    """Aipp.normalize: (x * scale - mean) / std as AIPP's min_chn = mean /
    scale and var_reci_chn = scale / std, each divided in f64 from the f32
    numbers and rounded to f32, then AIPP's f32 steps."""
    mean, std, scale = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225), 1 / 255
    cfg = relayout.Aipp.normalize("RGB888_U8", 7, 5, mean, std, scale)
    assert (cfg.channels, cfg.height, cfg.width, cfg.frame_bytes) == \
        (3, 5, 7, 105)
    frames = rng.integers(0, 256, (4, 5, 7, 3), dtype=np.uint8)
    got = relayout.preprocess(frames, cfg, to="NCHW", dtype="f32",
                              device=device)
    mins = np.float32([np.float64(np.float32(m)) / scale for m in mean])
    var = np.float32([scale / np.float64(np.float32(s)) for s in std])
    x = frames.transpose(0, 3, 1, 2).astype(np.float32)
    want = (x - mins[:, None, None]) * var[:, None, None]
    assert np.array_equal(got, want)
    close = (x * scale - np.array(mean)[:, None, None]) / \
        np.array(std)[:, None, None]
    assert np.abs(got - close).max() < 1e-5
    with pytest.raises(relayout.Error, match="std finite and not zero"):
        relayout.Aipp.normalize("RGB888_U8", 7, 5, std=(1, 0, 1))
    with pytest.raises(relayout.Error, match="input_format 'BGR'"):
        relayout.Aipp.normalize("BGR", 7, 5)


def test_out_must_be_writeable(tmp_path):
    """A read-only out= (a memory-mapped file opened "r", a bytes object's
    buffer) is refused, never written."""
    plan = relayout.Engine("ref").plan("NCHW", "NC1HWC0", (2, 17, 5, 3))
    x = rng.random((2, 17, 5, 3), np.float32)
    np.save(tmp_path / "z.npy", np.zeros(plan.dst_shape, np.float32))
    mapped = np.load(tmp_path / "z.npy", mmap_mode="r")
    frozen = bytes(plan.dst_shape[0] * 2 * 5 * 3 * 16 * 4)
    for out in (mapped, np.frombuffer(frozen, np.float32)
                .reshape(plan.dst_shape)):
        with pytest.raises(ValueError, match="read-only"):
            plan.run(x, out=out)
    assert not np.any(np.load(tmp_path / "z.npy")) and not any(frozen)
    with pytest.raises(TypeError, match="out must be a numpy array, not list"):
        plan.run(x, out=[0.0] * 480)
    pre = relayout.Engine("ref").preprocessing(NV12_JPEG, 1, dtype="f32")
    out = np.zeros(pre.dst_shape, np.float32)
    out.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        pre.run(np.zeros(pre.frame_bytes, np.uint8), out=out)


def test_engines_from_threads():
    """Engines made by four threads at once (PoCL crashed there); one
    engine's plan run from several threads is either whole or refused as
    busy, never a race."""
    import threading
    made, errors = [], []

    def make():
        made.append(relayout.Engine("cpu").device)

    threads = [threading.Thread(target=make) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(made) == 4 and len(set(made)) == 1
    plan = relayout.Engine("ref").plan("NCHW", "NC1HWC0", (4, 61, 64, 64))
    x = rng.random((4, 61, 64, 64), np.float32)
    want = nc1hwc0(x, 16)
    results = []

    def run():
        try:
            results.append(plan.run(x))
        except relayout.Error as e:
            errors.append(e)

    threads = [threading.Thread(target=run) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(np.array_equal(r, want) for r in results) and results
    assert all(e.status == "RELAYOUT_ERR_BUSY" for e in errors)
    assert len(results) + len(errors) == 4


def test_arguments_checked_before_ctypes():
    """Python integers and floats out of the C types' range are refused by
    argument name, not wrapped (2**32+5 read as 5, 1e-50 as 0)."""
    x = np.zeros((2, 17, 5, 3), np.float32)
    bad = [
        (dict(to_dtype="i8", zero_point=2**32 + 5), r"zero_point=4294967301"),
        (dict(to_dtype="i8", scale=1e-50), r"scale=1e-50 is out of f32"),
        (dict(to_dtype="i8", scale=1e300), r"scale=1e\+300"),
        (dict(from_scale=0.5, from_zero_point=-2**31 - 1),
         r"from_zero_point=-2147483649"),
        (dict(to_dtype="i8", axis="C", zero_point=np.full(17, 2**40)),
         r"zero points must be int32"),
    ]
    for cast, message in bad:
        with pytest.raises(relayout.Error, match=message):
            relayout.convert(x, "NCHW", "NC1HWC0", device="ref", **cast)
    y = np.zeros((2, 2, 5, 3, 16), np.float32)
    for c, message in ((2**64 + 17, r"dims\['C'\]=18446744073709551633"),
                       (2**70, r"dims\['C'\]=1180591620717411303424")):
        with pytest.raises(relayout.Error, match=message):
            relayout.convert(y, "NC1HWC0", "NCHW", device="ref",
                             dims={"C": c})
    with pytest.raises(relayout.Error, match=r"width=18446744073709551632"):
        relayout.Aipp.normalize("RGB888_U8", 2**64 + 16, 16)
    with pytest.raises(relayout.Error, match=r"std\[1\]=1e-60"):
        relayout.Aipp.normalize("RGB888_U8", 16, 16, std=(1, 1e-60, 1))
    with pytest.raises(relayout.Error, match=r"shape\[0\]"):
        relayout.Layout("NCHW").explain([2**63, 1, 1, 1])
    with pytest.raises(relayout.Error, match=r"quant_zero_point=4294967296"):
        relayout.Engine("ref").preprocessing(NV12_JPEG, 1, dtype="u8",
                                             quant_zero_point=2**32)


def test_argument_types_named():
    """Arguments of the wrong type raise TypeError naming them."""
    with pytest.raises(TypeError, match="layout must be a str, not int"):
        relayout.Layout(5)
    with pytest.raises(TypeError, match="layout must be a str, not NoneType"):
        relayout.convert(np.zeros(3, np.float32), None, "ND")
    with pytest.raises(TypeError, match="config must be an Aipp or its text"
                                        r" \(str\), not bytes"):
        relayout.preprocess(np.zeros(8, np.uint8), NV12_JPEG.encode())
    with pytest.raises(TypeError, match=r"dims\['C'\] must be an integer"):
        relayout.convert(np.zeros((2, 2, 5, 3, 16), np.float32), "NC1HWC0",
                         "NCHW", dims={"C": "17"}, device="ref")


def test_explain_draws_the_buffer(tmp_path):
    """Layout.explain's result is still the dict, and Jupyter's picture:
    the same SVG the command draws."""
    e = relayout.Layout("FRACTAL_NZ").explain([20, 28], "f16")
    assert e["shape"] == (2, 2, 16, 16) and isinstance(e, dict)
    svg = e._repr_svg_()
    import subprocess
    out = tmp_path / "nz.svg"
    subprocess.run([relayout._command._command(), "explain", "FRACTAL_NZ",
                    "--shape", "20x28", "--dtype", "f16", "--svg", str(out)],
                   check=True)
    assert out.read_text() == svg
    import xml.etree.ElementTree as ET
    cells = [c for c in ET.fromstring(svg).iter(
        "{http://www.w3.org/2000/svg}rect")]
    assert len(cells) == 1024
    labels = {int(c.get("data-offset")): c.get("data-label") for c in cells}
    assert labels[0] == "0,0" and labels[16] == "1,0" and labels[256] == "16,0"
    assert labels[512] == "0,16" and labels[20 * 16] == ""  # M's padding
    assert "--values" not in e.svg(values=True) and \
        'data-label="28"' in e.svg(values=True)
