"""transformers (and PEFT) on a drmas checkpoint. argv[1]: a JSON file {"model", "adapters": [dirs], "ids",
"promptLength", "saveBf16": dir or null}. Prints {"base": log-probs, "adapters": [log-probs per adapter],
"bf16": log-probs of the bf16 copy transformers saved (sharded, with its index json) and loaded again, "bf16Files"},
where log-probs are those of ids[t] after ids[:t] for t >= promptLength, computed in float32."""
import json
import os
import sys

import torch
from peft import PeftModel
from transformers import AutoModelForCausalLM

torch.manual_seed(0)
torch.set_num_threads(2)
job = json.load(open(sys.argv[1]))
ids = torch.tensor([job["ids"]])
start = job["promptLength"]


def log_probs(model):
    with torch.no_grad():
        logits = model(input_ids=ids).logits[0].double()
    lp = torch.log_softmax(logits, dim=-1)
    return [lp[t - 1, job["ids"][t]].item() for t in range(start, len(job["ids"]))]


def load(path):
    return AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32, attn_implementation="eager").eval()


base = load(job["model"])
out = {"base": log_probs(base), "adapters": []}
for adapter in job["adapters"]:
    out["adapters"].append(log_probs(PeftModel.from_pretrained(load(job["model"]), adapter).eval()))
if job.get("saveBf16"):
    base.to(torch.bfloat16).save_pretrained(job["saveBf16"], max_shard_size="100MB")
    out["bf16Files"] = sorted(os.listdir(job["saveBf16"]))
    out["bf16"] = log_probs(load(job["saveBf16"]))
json.dump(out, sys.stdout)
