#!/usr/bin/env python3
"""Loads a checkpoint folder written by the TypeScript code with Hugging Face libraries and reports what it got.

Usage: load_with_transformers.py CHECKPOINT_DIR < request.json
request.json: {"texts": [...], "messages": [{"role", "content"}, ...]}
Prints JSON: {"tensors": {name: {"shape", "dtype", "sum"}}, "model": {"missing", "unexpected", "mismatched",
"max_abs_diff"} or null when transformers cannot use the installed torch, "tokenizer": {"ids": [[...]], "chat": "...", "eos_token_id"}}.
Exit status 3 when safetensors or transformers is not installed.
"""
import glob
import json
import os
import sys

try:
    import torch
    from safetensors.torch import load_file
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from transformers.utils import is_torch_available
except ImportError as err:
    print(f"missing library: {err}", file=sys.stderr)
    sys.exit(3)


def load_model(ckpt, tensors):
    model, info = AutoModelForCausalLM.from_pretrained(ckpt, dtype=torch.float32, output_loading_info=True)
    state = model.state_dict()
    diff = max(float((state[k].float() - v.float()).abs().max()) for k, v in tensors.items())
    return {
        "missing": sorted(info["missing_keys"]),
        "unexpected": sorted(info["unexpected_keys"]),
        "mismatched": [str(m) for m in info["mismatched_keys"]],
        "max_abs_diff": diff,
    }


def main():
    ckpt = sys.argv[1]
    request = json.load(sys.stdin)
    tensors = {}
    for path in sorted(glob.glob(os.path.join(ckpt, "*.safetensors"))):
        tensors.update(load_file(path))
    out = {"tensors": {k: {"shape": list(v.shape), "dtype": str(v.dtype), "sum": float(v.double().sum())}
                       for k, v in tensors.items()}}

    out["model"] = None
    if is_torch_available():
        out["model"] = load_model(ckpt, tensors)

    tok = AutoTokenizer.from_pretrained(ckpt)
    out["tokenizer"] = {
        "ids": [tok.encode(t) for t in request["texts"]],
        "chat": tok.apply_chat_template(request["messages"], tokenize=False, add_generation_prompt=True),
        "eos_token_id": tok.eos_token_id,
        "pad_token_id": tok.pad_token_id,
    }
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
