"""relayout.Preprocessor in data pipelines: it pickles before any device
state exists, maps a batch dict to the model's input with the bytes of AIPP's
steps written in numpy (test_relayout.aipp_nv12), and builds its plan once
per worker process, in a process pool, a Dask cluster of two and two Ray
actors; batches of encoded images decode in the library."""
import multiprocessing
import os
import pickle

import numpy as np
import pytest

import relayout
from test_relayout import NV12_JPEG, aipp_nv12

W, H, FRAME = 40, 6, 40 * 6 * 3 // 2
rng = np.random.default_rng(3)
BATCHES = [rng.integers(0, 256, (4, FRAME), dtype=np.uint8) for _ in range(8)]


def want(frames):
    return aipp_nv12(frames, len(frames), W, H).astype(np.float32)


def make():
    return relayout.Preprocessor(NV12_JPEG, to="NCHW", dtype="f32",
                                 device="cpu")


def test_pickles_and_maps_a_batch():
    pre = pickle.loads(pickle.dumps(make()))
    assert len(pickle.dumps(make())) < 2000  # settings only, no device
    for frames in BATCHES[:3]:
        out = pre({"frames": frames, "id": 7})
        assert out["id"] == 7 and out["input"].shape == (4, 3, H, W)
        assert out["input"].tobytes() == want(frames).tobytes()
    assert pre.plans_built == 1, "one plan for one batch size"
    with pytest.raises(relayout.Error, match="no 'frames'"):
        pre({"images": BATCHES[0]})
    with pytest.raises(relayout.Error, match="not a whole number"):
        pre({"frames": BATCHES[0].ravel()[:-1]})
    with pytest.raises(relayout.Error, match="line 2"):
        relayout.Preprocessor("aipp_op {\n resize : true\n}\n")


def png(rgb):
    """An 8-bit RGB PNG of an (h, w, 3) array, written here from the PNG
    specification (signature, IHDR, one zlib IDAT of filter-0 rows, IEND)."""
    import struct
    import zlib

    def chunk(kind, data):
        return (struct.pack(">I", len(data)) + kind + data +
                struct.pack(">I", zlib.crc32(kind + data)))
    h, w, _ = rgb.shape
    rows = b"".join(b"\0" + rgb[r].tobytes() for r in range(h))
    return (b"\x89PNG\r\n\x1a\n" +
            chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)) +
            chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


def test_encoded_images():
    """PNG files in the batch, decoded by the library: the output of their
    raw frames; a damaged one named by its index."""
    pre = pickle.loads(pickle.dumps(relayout.Preprocessor(
        RGB_CFG, to="NCHW", dtype="f32", device="cpu")))
    pixels = rng.integers(0, 256, (3, 5, 12, 3), dtype=np.uint8)
    images = [png(p) for p in pixels]
    assert relayout.Aipp(RGB_CFG).decode(images).tobytes() == pixels.tobytes()
    raw = pre({"frames": pixels.reshape(3, -1)})["input"]
    for batch in (images, np.array(images, dtype=object)):
        assert pre({"frames": batch})["input"].tobytes() == raw.tobytes()
    with pytest.raises(relayout.Error, match=r"images\[1\]"):
        pre({"frames": [images[0], images[1][:40], images[2]]})
    with pytest.raises(relayout.Error, match="not a JPEG or PNG"):
        pre({"frames": [b"GIF89a" + bytes(100)]})


RGB_CFG = """aipp_op {
  input_format : RGB888_U8
  src_image_size_w : 12
  src_image_size_h : 5
  mean_chn_0 : 1
  mean_chn_1 : 2
  mean_chn_2 : 3
}
"""


def _in_worker(args):
    pre, frames = args
    return os.getpid(), pre({"frames": frames})["input"], pre.plans_built


def test_a_process_pool():
    """Two spawned workers: the serial bytes, a plan per worker."""
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(2) as pool:
        results = pool.map(_in_worker, [(make(), b) for b in BATCHES])
    for (_, out, _), frames in zip(results, BATCHES):
        assert out.tobytes() == want(frames).tobytes()
    built = {}
    for pid, _, n in results:
        built[pid] = max(built.get(pid, 0), n)
    assert set(built.values()) == {1}, built


def test_dask():
    """Dask's LocalCluster of two worker processes, through client.map and
    a bag's map_partitions: the serial bytes, a plan per worker."""
    distributed = pytest.importorskip("distributed")
    import dask.bag as db
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1,
                                  processes=True, dashboard_address=None
                                  ) as cluster, \
            distributed.Client(cluster) as client:
        pre = make()
        outs = client.gather(client.map(pre, [{"frames": b} for b in BATCHES],
                                        pure=False))
        for out, frames in zip(outs, BATCHES):
            assert out["input"].tobytes() == want(frames).tobytes()
        bag = db.from_sequence([{"frames": b} for b in BATCHES],
                               npartitions=4)
        parts = bag.map_partitions(lambda p: [pre(x) for x in p]).compute()
        assert [o["input"].tobytes() for o in parts] == \
            [want(b).tobytes() for b in BATCHES]
        counts = client.run(lambda: dict(relayout._pipeline.plans_built))
        assert all(list(c.values()) == [1] for c in counts.values()), counts


class _RayStage(relayout.Preprocessor):
    """The Preprocessor as Ray's actor class, saying which process ran each
    batch and how many plans that process had built."""

    def __call__(self, batch):
        out = super().__call__(batch)
        n = len(batch["data"])
        out["pid"] = np.full(n, os.getpid())
        out["built"] = np.full(n, self.plans_built)
        return out


def test_ray():
    """Ray Data's map_batches over two Preprocessor actors
    (ray.init(num_cpus=2)): the serial bytes, in order; each actor's
    process builds one plan."""
    ray = pytest.importorskip("ray")
    here = os.path.dirname(os.path.abspath(__file__))  # _RayStage's module
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             configure_logging=False,
             runtime_env={"env_vars": {"PYTHONPATH": here}})
    try:
        ray.data.DataContext.get_current().execution_options.preserve_order \
            = True
        frames = np.concatenate(BATCHES)
        ds = ray.data.from_numpy(list(BATCHES)).map_batches(  # 8 blocks
            _RayStage, batch_size=4, batch_format="numpy",
            fn_constructor_kwargs=dict(config=NV12_JPEG, to="NCHW",
                                       dtype="f32", device="cpu",
                                       frames_key="data"),
            compute=ray.data.ActorPoolStrategy(size=2))
        out = ds.take_batch(len(frames), batch_format="numpy")
        assert out["input"].tobytes() == want(frames).tobytes()
        built = {}
        for pid, n in zip(out["pid"], out["built"]):
            built[pid] = max(built.get(pid, 0), n)
        assert set(built.values()) == {1}, built
    finally:
        ray.shutdown()
