#!/usr/bin/env python3
"""pcie.py - the host link's bandwidth each way, pinned and pageable, as
PyTorch's copies reach it on a CUDA GPU: the ceiling for relayout's host
arrays and repack on a discrete GPU (bench/README.md). Prints one JSON object.

usage: pcie.py [MIB] [RUNS]
"""
import json
import sys
import time

import torch


def rate(dst, src, runs):
    """Median GB/s of runs copies of src into dst (bytes moved once)."""
    dst.copy_(src)
    torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        dst.copy_(src, non_blocking=True)
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
    return round(src.numel() / sorted(times)[runs // 2] / 1e9, 2)


def main():
    mib = int(sys.argv[1]) if len(sys.argv) > 1 else 1024
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 7
    n = mib << 20
    dev = torch.empty(n, dtype=torch.uint8, device="cuda")
    pinned = torch.ones(n, dtype=torch.uint8).pin_memory()
    pageable = torch.ones(n, dtype=torch.uint8)
    print(json.dumps({
        "gpu": torch.cuda.get_device_name(),
        "mib": mib,
        "pinned_up_gbps": rate(dev, pinned, runs),
        "pinned_down_gbps": rate(pinned, dev, runs),
        "pageable_up_gbps": rate(dev, pageable, runs),
        "pageable_down_gbps": rate(pageable, dev, runs),
    }))


if __name__ == "__main__":
    main()
