#!/usr/bin/env python3
"""make_checkpoint.py - writes the repack benchmark's checkpoint: ResNet-50's
conv weights (with their batch-norm vectors and the fc layer) and one
7B-style transformer layer with its embedding and output head, fp16 with
random contents, about 1 GiB. Python's standard library only.

With --experts N, instead N mixture-of-experts layers' small weights
(16 experts of 2 tensors each a layer, 64x64 fp16): a checkpoint of many
tensors, for the time repack spends on its header.

usage: make_checkpoint.py OUT.safetensors [--experts N]
"""
import json
import os
import struct
import sys


def resnet50():
    """(name, shape) of ResNet-50's weights, in torchvision's naming."""
    yield "conv1.weight", [64, 3, 7, 7]
    yield "bn1.weight", [64]
    yield "bn1.bias", [64]
    cin = 64
    for layer, (width, blocks) in enumerate([(64, 3), (128, 4), (256, 6), (512, 3)], 1):
        for b in range(blocks):
            p = f"layer{layer}.{b}"
            for i, shape in enumerate([[width, cin, 1, 1], [width, width, 3, 3],
                                       [width * 4, width, 1, 1]], 1):
                yield f"{p}.conv{i}.weight", shape
                yield f"{p}.bn{i}.weight", [shape[0]]
                yield f"{p}.bn{i}.bias", [shape[0]]
            if b == 0:
                yield f"{p}.downsample.0.weight", [width * 4, cin, 1, 1]
                yield f"{p}.downsample.1.weight", [width * 4]
            cin = width * 4
    yield "fc.weight", [1000, 2048]
    yield "fc.bias", [1000]


def transformer_layer():
    """A 7B-style decoder layer, its embedding and head."""
    d, ff, vocab = 4096, 11008, 32000
    yield "model.embed_tokens.weight", [vocab, d]
    p = "model.layers.0"
    for n in "qkvo":
        yield f"{p}.self_attn.{n}_proj.weight", [d, d]
    yield f"{p}.mlp.gate_proj.weight", [ff, d]
    yield f"{p}.mlp.up_proj.weight", [ff, d]
    yield f"{p}.mlp.down_proj.weight", [d, ff]
    yield f"{p}.input_layernorm.weight", [d]
    yield f"{p}.post_attention_layernorm.weight", [d]
    yield "model.norm.weight", [d]
    yield "lm_head.weight", [vocab, d]


def experts(layers):
    """Small expert weights: 32 tensors a layer."""
    for layer in range(layers):
        for e in range(16):
            for w in ("w1", "w2"):
                yield f"layers.{layer}.moe.experts.{e}.{w}.weight", [64, 64]


def main():
    if len(sys.argv) not in (2, 4) or (len(sys.argv) == 4 and
                                       sys.argv[2] != "--experts"):
        sys.exit(__doc__)
    header, at = {}, 0
    tensors = (list(experts(int(sys.argv[3]))) if len(sys.argv) == 4 else
               list(resnet50()) + list(transformer_layer()))
    for name, shape in tensors:
        n = 2
        for e in shape:
            n *= e
        header[name] = {"dtype": "F16", "shape": shape, "data_offsets": [at, at + n]}
        at += n
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    block = os.urandom(1 << 20)
    with open(sys.argv[1], "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        left = at
        while left:
            f.write(block[: min(left, len(block))])
            left -= min(left, len(block))
    print(f"{sys.argv[1]}: {len(tensors)} tensors, {at / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
