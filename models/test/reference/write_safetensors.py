#!/usr/bin/env python3
"""Writes a safetensors file by hand (struct + json, no safetensors package) for the TypeScript reader's tests.

Tensors: "f32" (F32), "f16" (F16 bits from numpy's float16, round-to-nearest-even), "bf16" (BF16 bits written
literally), "i64" (I64), "matrix" (F32, shape [2, 3]). The header is NOT padded to 8 bytes and tensors are stored
in reverse name order, both legal, to exercise the reader. Prints the expected float values as JSON.

Usage: write_safetensors.py OUT_FILE
"""
import json
import struct
import sys

import numpy as np

F32 = np.array([1.0, -2.5, 3.14159, 1e-30, 65504.0], dtype="<f4")
F16 = np.array([1.0, -2.0, 0.5, 65504.0, 6.0e-8, -0.0], dtype="<f2")
# bfloat16 bit patterns: 1.0, -2.0, 3.140625 (0x4049), smallest subnormal 0x0001, +inf, -inf
BF16_BITS = np.array([0x3F80, 0xC000, 0x4049, 0x0001, 0x7F80, 0xFF80], dtype="<u2")
I64 = np.array([0, -1, 123456789, 2**40], dtype="<i8")
MATRIX = np.arange(6, dtype="<f4").reshape(2, 3)


def main():
    path = sys.argv[1]
    tensors = [
        ("matrix", "F32", [2, 3], MATRIX.tobytes()),
        ("i64", "I64", [4], I64.tobytes()),
        ("f32", "F32", [5], F32.tobytes()),
        ("f16", "F16", [6], F16.tobytes()),
        ("bf16", "BF16", [6], BF16_BITS.tobytes()),
    ]
    header = {"__metadata__": {"format": "pt", "source": "hand"}}
    body = b""
    for name, dtype, shape, raw in tensors:
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(body), len(body) + len(raw)]}
        body += raw
    header_bytes = json.dumps(header).encode("utf-8")
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(header_bytes)))
        f.write(header_bytes)
        f.write(body)
    bf16_values = (BF16_BITS.astype(np.uint32) << 16).view(np.float32)

    def floats(a):
        return [x if np.isfinite(x) else ("inf" if x > 0 else "-inf") for x in map(float, a)]

    json.dump({
        "matrix": floats(MATRIX.ravel()),
        "i64": [int(x) for x in I64],
        "f32": floats(F32),
        "f16": floats(F16.astype(np.float32)),
        "bf16": floats(bf16_values),
    }, sys.stdout)


if __name__ == "__main__":
    main()
