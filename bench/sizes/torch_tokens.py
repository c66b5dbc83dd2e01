"""transformers' model of a checkpoint folder on PyTorch 2.x: generation and training tokens per second, the
PyTorch side of bench/sizes/againstTorch.mjs (the drmas side is bench/sizes/tokensPerSecond.mjs, same workload).

  python torch_tokens.py generate MODEL_DIR --rows R --prompt P --new N [--threads T] [--precision fp32|bf16]
  python torch_tokens.py train MODEL_DIR --rows R --prompt P --response N --micro-batch M [--threads T] [--precision ...]

generate: `model.generate` of R rows of P prompt tokens, sampling (temperature 1, no top-k or top-p) exactly N new
tokens each (`min_new_tokens`), KV cache on; a 2-token call first, so the timed call starts warm.
train: the update of a policy-gradient step over R rows of P + N tokens in micro-batches of M rows: forward with the
logits of the response positions only (`logits_to_keep`, as TRL computes them), their log-softmax at the response
tokens, loss -(sum of log-prob x advantage) / response tokens, backward, gradient clipping at 1, AdamW (fused,
transformers' default optimizer) and zero_grad. Two updates; the second is timed, the first's loss and gradient norm
printed (`firstLoss`, `firstGradNorm`: the drmas side's, from the same weights, agree: test/interop/
againstTorchWorkload.test.ts).
The tokens are the drmas side's (bench/sizes/trainStep.mjs): prompts (r * 31 + j * 17 + 1) % V, responses
(r * 7919 + j * 104729) % V, advantages ((i % 7) - 3) / 3 over the flattened [R, N] response positions.
--precision bf16 runs the forward under bf16 autocast, weights and optimizer in float32 (oneDNN's bf16 path on a
CPU with AVX-512 BF16 or AMX). --lora-rank R trains a LoRA adapter of rank R (alpha 2R, no dropout) on every
projection of a frozen base instead of every weight: `LoraLinear` below is PEFT's `lora.Linear` forward with dropout
0 (base output + B(A(x)) x alpha / r, A uniform in +-1/sqrt(in), B zeros), written out so that the benchmark needs no
package beyond the trl environment's. Prints one JSON line: seconds, tokens, tokens per second, peak resident set.
"""
import argparse
import json
import resource
import time

import torch
import transformers
from transformers import AutoModelForCausalLM


LORA_TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")


class LoraLinear(torch.nn.Module):
    def __init__(self, base, rank):
        super().__init__()
        self.base = base
        self.lora_A = torch.nn.Parameter(torch.empty(rank, base.in_features).uniform_(-1, 1) / base.in_features ** 0.5)
        self.lora_B = torch.nn.Parameter(torch.zeros(base.out_features, rank))
        self.scaling = 2.0

    def forward(self, x):
        return self.base(x) + (x @ self.lora_A.t() @ self.lora_B.t()) * self.scaling


def add_lora(model, rank):
    for p in model.parameters():
        p.requires_grad_(False)
    for layer in model.model.layers:
        for block in (layer.self_attn, layer.mlp):
            for name in LORA_TARGETS:
                if hasattr(block, name):
                    setattr(block, name, LoraLinear(getattr(block, name), rank))


def prompts(rows, length, vocab):
    return torch.tensor([[(r * 31 + j * 17 + 1) % vocab for j in range(length)] for r in range(rows)])


def responses(rows, length, vocab):
    return torch.tensor([[(r * 7919 + j * 104729) % vocab for j in range(length)] for r in range(rows)])


def autocast(precision):
    return torch.autocast("cpu", dtype=torch.bfloat16, enabled=precision == "bf16")


def generate(model, args, vocab):
    ids = prompts(args.rows, args.prompt, vocab)
    mask = torch.ones_like(ids)
    kwargs = dict(attention_mask=mask, do_sample=True, temperature=1.0, top_k=0, top_p=1.0, use_cache=True,
                  pad_token_id=0)
    with torch.inference_mode(), autocast(args.precision):
        model.generate(ids, max_new_tokens=2, min_new_tokens=2, **kwargs)
        torch.manual_seed(0)
        started = time.perf_counter()
        out = model.generate(ids, max_new_tokens=args.new, min_new_tokens=args.new, **kwargs)
        seconds = time.perf_counter() - started
    tokens = (out.shape[1] - args.prompt) * args.rows
    return seconds, tokens


def train(model, args, vocab):
    ids = torch.cat([prompts(args.rows, args.prompt, vocab), responses(args.rows, args.response, vocab)], dim=1)
    flat = torch.arange(args.rows * args.response, dtype=torch.float32)
    advantages = (((flat % 7) - 3) / 3).reshape(args.rows, args.response)
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=1e-5, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01, fused=True)
    tokens_total = args.rows * args.response
    model.train()

    def update():
        total = 0.0
        for start in range(0, args.rows, args.micro_batch):
            rows = slice(start, start + args.micro_batch)
            with autocast(args.precision):
                logits = model(ids[rows], logits_to_keep=args.response + 1).logits[:, :-1]
            logps = torch.log_softmax(logits.float(), dim=-1)
            taken = logps.gather(-1, ids[rows, args.prompt:].unsqueeze(-1)).squeeze(-1)
            loss = -(taken * advantages[rows]).sum() / tokens_total
            loss.backward()
            total += loss.item()
        norm = torch.nn.utils.clip_grad_norm_(params, 1.0).item()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        return total, norm

    first = update()
    started = time.perf_counter()
    update()
    return time.perf_counter() - started, args.rows * (args.prompt + args.response), first


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["generate", "train"])
    parser.add_argument("model")
    parser.add_argument("--rows", type=int, required=True)
    parser.add_argument("--prompt", type=int, required=True)
    parser.add_argument("--new", type=int, default=0)
    parser.add_argument("--response", type=int, default=0)
    parser.add_argument("--micro-batch", type=int, default=0)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--precision", choices=["fp32", "bf16"], default="fp32")
    parser.add_argument("--lora-rank", type=int, default=0)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_pretrained(args.model, dtype=torch.float32)
    vocab = model.config.vocab_size
    if args.lora_rank:
        add_lora(model, args.lora_rank)
    if args.mode == "generate":
        model.eval()
        seconds, tokens = generate(model, args, vocab)
        first = None
    else:
        args.micro_batch = args.micro_batch or args.rows
        seconds, tokens, first = train(model, args, vocab)
    print(json.dumps({
        "engine": "pytorch",
        "mode": args.mode,
        "setting": f"{args.threads}x{args.precision}" + (f"-mb{args.micro_batch}" if args.mode == "train" else "")
        + (f"-lora{args.lora_rank}" if args.lora_rank and args.mode == "train" else ""),
        "seconds": round(seconds, 3),
        "tokens": tokens,
        "tokensPerSecond": round(tokens / seconds, 2),
        "peakRssGiB": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20, 2),
        "runtime": f"torch {torch.__version__}, transformers {transformers.__version__}",
        **({"firstLoss": first[0], "firstGradNorm": first[1]} if first else {}),
    }))


if __name__ == "__main__":
    main()
