#!/usr/bin/env python3
"""Independent check of `drmas export --merge-lora` against PEFT's merge rule, read in Python.

Reads a PEFT adapter folder (adapter_config.json, adapter_model.safetensors), the base model's model.safetensors and
the merged model's, parsing safetensors by hand (an 8-byte little-endian header length, the JSON header, raw bytes:
the `safetensors` module is not needed), and applies PEFT's `merge_and_unload` rule to every adapted module in
float64 with torch: W + (lora_alpha / r) * B @ A, where PEFT names lora_A `[r, in]` and lora_B `[out, r]` under
`base_model.model.<module path>.lora_{A,B}.weight` (peft/tuners/lora/layer.py `get_delta_weight`, without
fan_in_fan_out). Prints JSON: {"modules": N, "max_abs_diff": x, "max_rel_diff": y, "others_equal": bool,
"others": M}, comparing with the merged file's tensors.

Usage: peft_merge.py ADAPTER_DIR BASE_DIR MERGED_DIR
"""
import json
import os
import struct
import sys

import torch

DTYPES = {"F32": torch.float32, "F64": torch.float64, "F16": torch.float16, "BF16": torch.bfloat16}
PREFIX = "base_model.model."


def read_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + n])
    header.pop("__metadata__", None)
    body = data[8 + n :]
    tensors = {}
    for name, info in header.items():
        start, end = info["data_offsets"]
        raw = bytearray(body[start:end])
        t = torch.frombuffer(raw, dtype=DTYPES[info["dtype"]]) if raw else torch.zeros(0, dtype=DTYPES[info["dtype"]])
        tensors[name] = t.reshape(info["shape"]).to(torch.float64)
    return tensors


def main(adapter_dir, base_dir, merged_dir):
    with open(os.path.join(adapter_dir, "adapter_config.json")) as f:
        config = json.load(f)
    assert config["peft_type"] == "LORA" and not config.get("use_rslora") and not config.get("fan_in_fan_out")
    scaling = config["lora_alpha"] / config["r"]
    adapter = read_safetensors(os.path.join(adapter_dir, "adapter_model.safetensors"))
    base = read_safetensors(os.path.join(base_dir, "model.safetensors"))
    merged = read_safetensors(os.path.join(merged_dir, "model.safetensors"))
    expected = dict(base)
    modules = 0
    for name, a in adapter.items():
        if not name.endswith(".lora_A.weight"):
            continue
        module = name[len(PREFIX) : -len(".lora_A.weight")]
        b = adapter[f"{PREFIX}{module}.lora_B.weight"]
        assert a.shape[0] == config["r"] and b.shape[1] == config["r"], name
        expected[f"{module}.weight"] = base[f"{module}.weight"] + scaling * (b @ a)
        modules += 1
    assert sorted(merged) == sorted(expected), "the merged model's tensors are not the base's"
    max_abs = max_rel = 0.0
    others_equal = True
    for name, want in expected.items():
        got = merged[name]
        if name in base and want is base[name]:
            others_equal = others_equal and torch.equal(got, want)
            continue
        diff = (got - want).abs()
        max_abs = max(max_abs, diff.max().item())
        max_rel = max(max_rel, (diff / want.abs().clamp_min(1e-30)).max().item())
    print(json.dumps({"modules": modules, "max_abs_diff": max_abs, "max_rel_diff": max_rel, "others_equal": others_equal,
                      "others": len(expected) - modules}))


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(*sys.argv[1:])
