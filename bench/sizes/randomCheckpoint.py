"""A random checkpoint with a published configuration, as transformers saves it (bf16 safetensors).

Usage (the peers environment of scripts/python-env.sh):
  python bench/sizes/randomCheckpoint.py CONFIG.json OUT_DIR TOKENIZER_DIR [--layers N]
CONFIG.json is the model's published config.json (e.g. Qwen2.5-0.5B's); --layers keeps only the first N layers
(the head and embedding unchanged), for measuring the output head alone. The tokenizer files are copied from
TOKENIZER_DIR. Prints the parameter count.
"""

import argparse
import json
import shutil

import torch
from transformers import AutoConfig, AutoModelForCausalLM

parser = argparse.ArgumentParser()
parser.add_argument("config")
parser.add_argument("out")
parser.add_argument("tokenizer")
parser.add_argument("--layers", type=int)
args = parser.parse_args()

settings = json.load(open(args.config))
if args.layers:
    settings["num_hidden_layers"] = args.layers
    settings["max_window_layers"] = min(settings.get("max_window_layers", args.layers), args.layers)
torch.manual_seed(0)
model = AutoModelForCausalLM.from_config(AutoConfig.for_model(**settings), dtype=torch.bfloat16)
model.save_pretrained(args.out)
for name in ("tokenizer.json", "tokenizer_config.json"):
    shutil.copy(f"{args.tokenizer}/{name}", f"{args.out}/{name}")
print(sum(p.numel() for p in model.parameters()))
