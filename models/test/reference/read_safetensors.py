#!/usr/bin/env python3
"""Independent safetensors reader for the TypeScript writer's tests.

Parses the format with struct/json (numpy for decoding, torch when present for bfloat16), checks it as strictly as
the Rust `safetensors` crate does (header padding, contiguous offsets covering the data, metadata format), and
prints JSON: {"metadata": {...}, "header_length": N, "tensors": {name: {"dtype", "shape", "values", "bits"?,
"as_f16_bits"?, "as_bf16_bits"?}}}. Non-finite values print as the strings "nan", "inf", "-inf".

Usage: read_safetensors.py FILE [FILE ...]   (several files: shards, merged into one "tensors" map)
"""
import json
import math
import struct
import sys

import numpy as np

try:
    import torch
except ImportError:  # bfloat16 is decoded with numpy bit shifts instead
    torch = None

DTYPES = {"F32": ("<f4", 4), "F16": ("<f2", 2), "BF16": ("<u2", 2), "F64": ("<f8", 8),
          "I64": ("<i8", 8), "I32": ("<i4", 4), "I16": ("<i2", 2), "I8": ("i1", 1), "U8": ("u1", 1)}


def fail(msg):
    print(msg, file=sys.stderr)
    sys.exit(2)


def as_json_float(x):
    x = float(x)
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


def bf16_to_f32(bits):
    if torch is not None:
        return torch.from_numpy(bits.astype(np.int16)).view(torch.bfloat16).float().numpy()
    return (bits.astype(np.uint32) << 16).view(np.float32)


def f32_to_bf16_bits(values):
    if torch is not None:
        return torch.from_numpy(values.copy()).bfloat16().view(torch.int16).numpy().astype(np.uint16)
    return None


def read(path, out):
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 8:
        fail(f"{path}: shorter than 8 bytes")
    (n,) = struct.unpack("<Q", data[:8])
    if n % 8 != 0:
        fail(f"{path}: header length {n} is not a multiple of 8")
    header_bytes = data[8:8 + n]
    header = json.loads(header_bytes.decode("utf-8"))
    body = data[8 + n:]
    metadata = header.pop("__metadata__", {})
    if metadata.get("format") not in ("pt", "tf", "flax", "mlx"):
        fail(f"{path}: __metadata__.format is {metadata.get('format')!r}; transformers would refuse it")
    spans = sorted((v["data_offsets"][0], v["data_offsets"][1], k) for k, v in header.items())
    expected_start = 0
    for start, end, name in spans:
        if start != expected_start:
            fail(f"{path}: tensor {name} starts at {start}, expected {expected_start} (offsets must be contiguous)")
        expected_start = end
    if expected_start != len(body):
        fail(f"{path}: tensors cover {expected_start} bytes but the data section has {len(body)}")
    for name, info in header.items():
        dtype, shape = info["dtype"], info["shape"]
        start, end = info["data_offsets"]
        np_dtype, size = DTYPES[dtype]
        count = int(np.prod(shape)) if shape else 1
        if end - start != count * size:
            fail(f"{path}: tensor {name} spans {end - start} bytes, {dtype}{shape} needs {count * size}")
        raw = np.frombuffer(body[start:end], dtype=np_dtype)
        entry = {"dtype": dtype, "shape": shape}
        if dtype == "BF16":
            entry["bits"] = [int(b) for b in raw]
            values = bf16_to_f32(raw)
        elif dtype == "F16":
            entry["bits"] = [int(b) for b in raw.view("<u2")]
            values = raw.astype(np.float32)
        else:
            values = raw
        if dtype == "F32":
            entry["as_f16_bits"] = [int(b) for b in raw.astype(np.float16).view("<u2")]
            bf = f32_to_bf16_bits(raw)
            if bf is not None:
                entry["as_bf16_bits"] = [int(b) for b in bf]
        entry["values"] = [as_json_float(v) if dtype in ("F32", "F16", "BF16", "F64") else int(v) for v in values]
        out["tensors"][name] = entry
    out["metadata"] = metadata
    out["header_length"] = n


def main():
    if len(sys.argv) < 2:
        fail(__doc__)
    out = {"tensors": {}}
    for path in sys.argv[1:]:
        read(path, out)
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
