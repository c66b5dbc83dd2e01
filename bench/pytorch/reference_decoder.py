"""PyTorch reference for drmas's benchmark: a minimal Qwen2-style decoder (the architecture and sizes of drmas's
built-in `tiny` and `small`: RMSNorm, rotary embedding, grouped-query attention with q/k/v bias, SiLU MLP, untied
lm head), with a preallocated KV cache for generation and AdamW training.

Runs with Debian's torch 1.13 (`apt install python3-torch libopenblas0-pthread`, then `/usr/bin/python3`) and with
PyPI's torch 2.x (the trl environment of scripts/python-env.sh), whose MKL and oneDNN it reports instead of OpenBLAS.
Usage: reference_decoder.py generate|train|matmul|probe [tiny|small] [--repeats N] [--micro-batch N] [--threads N]
[--dtype fp32|bf16]. `--dtype bf16` runs the forward passes (and generation) under bf16 autocast, the weights and
optimizer in float32: oneDNN's bf16 kernels on a CPU with AVX-512 BF16 or AMX.
Prints one JSON line per measurement. `probe` measures one setting of the BLAS and threads (chosen by the caller's
environment: OPENBLAS_CORETYPE, OPENBLAS_NUM_THREADS, LD_LIBRARY_PATH for OpenBLAS's OpenMP build) on a matmul and one
training round, so that bench/run.mjs can pick the fastest setting of this machine.
"""
import argparse
import ctypes
import json
import math
import os
import platform
import resource
import statistics
import time

import torch
import torch.nn.functional as F

MODELS = {
    "tiny": dict(hidden=256, layers=4, heads=4, kv_heads=2, intermediate=704, vocab=512),
    "small": dict(hidden=512, layers=8, heads=8, kv_heads=4, intermediate=1408, vocab=4096),
}
EPS = 1e-6
THETA = 10000.0


class RMSNorm(torch.nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS) * self.weight


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


class Layer(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        h, self.heads, self.kv_heads = c["hidden"], c["heads"], c["kv_heads"]
        self.head_dim = h // self.heads
        self.input_layernorm = RMSNorm(h)
        self.q_proj = torch.nn.Linear(h, self.heads * self.head_dim)
        self.k_proj = torch.nn.Linear(h, self.kv_heads * self.head_dim)
        self.v_proj = torch.nn.Linear(h, self.kv_heads * self.head_dim)
        self.o_proj = torch.nn.Linear(self.heads * self.head_dim, h, bias=False)
        self.post_attention_layernorm = RMSNorm(h)
        self.gate_proj = torch.nn.Linear(h, c["intermediate"], bias=False)
        self.up_proj = torch.nn.Linear(h, c["intermediate"], bias=False)
        self.down_proj = torch.nn.Linear(c["intermediate"], h, bias=False)

    def forward(self, x, cos, sin, mask, cache=None, filled=0):
        b, t, _ = x.shape
        d = self.head_dim
        n = self.input_layernorm(x)
        q = self.q_proj(n).view(b, t, self.heads, d).transpose(1, 2)
        k = self.k_proj(n).view(b, t, self.kv_heads, d).transpose(1, 2)
        v = self.v_proj(n).view(b, t, self.kv_heads, d).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        if cache is not None:
            cache[0][:, :, filled:filled + t] = k
            cache[1][:, :, filled:filled + t] = v
            k = cache[0][:, :, :filled + t]
            v = cache[1][:, :, :filled + t]
        group = self.heads // self.kv_heads
        # Grouped-query attention: fold the query group into the rows of each KV head.
        qg = q.reshape(b, self.kv_heads, group * t, d)
        scores = torch.matmul(qg, k.transpose(-1, -2)) / math.sqrt(d)
        scores = scores.view(b, self.kv_heads, group, t, -1) + mask
        probs = torch.softmax(scores, dim=-1).view(b, self.kv_heads, group * t, -1)
        ctx = torch.matmul(probs, v).view(b, self.heads, t, d).transpose(1, 2).reshape(b, t, -1)
        x = x + self.o_proj(ctx)
        n = self.post_attention_layernorm(x)
        return x + self.down_proj(F.silu(self.gate_proj(n)) * self.up_proj(n))


class Decoder(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        self.embed_tokens = torch.nn.Embedding(c["vocab"], c["hidden"])
        self.layers = torch.nn.ModuleList([Layer(c) for _ in range(c["layers"])])
        self.norm = RMSNorm(c["hidden"])
        self.lm_head = torch.nn.Linear(c["hidden"], c["vocab"], bias=False)
        d = c["hidden"] // c["heads"]
        self.register_buffer("inv_freq", 1.0 / THETA ** (torch.arange(0, d, 2).float() / d), persistent=False)
        for p in self.parameters():
            if p.dim() > 1:
                torch.nn.init.normal_(p, std=0.02)

    def rope(self, positions):
        freqs = positions[..., None].float() * self.inv_freq
        emb = torch.cat((freqs, freqs), dim=-1)[:, None]  # [b, 1, t, d]
        return emb.cos(), emb.sin()

    def forward(self, ids, positions, mask, caches=None, filled=0):
        x = self.embed_tokens(ids)
        cos, sin = self.rope(positions)
        for i, layer in enumerate(self.layers):
            x = layer(x, cos, sin, mask, caches[i] if caches is not None else None, filled)
        return self.norm(x)


def causal_mask(valid, t, filled):
    """Additive mask [b, 1, 1, t, filled + t]: causal over columns, padding keys hidden."""
    keys = filled + t
    causal = torch.arange(keys)[None, :] <= (filled + torch.arange(t))[:, None]
    allowed = causal[None] & valid[:, None, :keys].bool()
    return torch.where(allowed, 0.0, -1e9)[:, None, None]


@torch.inference_mode()
def generate(model, prompts, new_tokens, generator):
    with forward_context():
        return generate_tokens(model, prompts, new_tokens, generator)


def generate_tokens(model, prompts, new_tokens, generator):
    c = model.c
    b, p = prompts.shape
    d = c["hidden"] // c["heads"]
    total = p + new_tokens
    caches = [(torch.zeros(b, c["kv_heads"], total, d), torch.zeros(b, c["kv_heads"], total, d)) for _ in range(c["layers"])]
    valid = torch.ones(b, total)
    positions = torch.arange(p)[None].expand(b, p)
    hidden = model(prompts, positions, causal_mask(valid, p, 0), caches, 0)
    filled = p
    out = []
    logp_sum = torch.zeros(b)
    for step in range(new_tokens):
        logp = torch.log_softmax(model.lm_head(hidden[:, -1]).float(), dim=-1)
        token = torch.multinomial(logp.exp(), 1, generator=generator)
        logp_sum += logp.gather(1, token)[:, 0]
        out.append(token)
        if step + 1 == new_tokens:
            break
        hidden = model(token, torch.full((b, 1), filled), causal_mask(valid, 1, filled), caches, filled)
        filled += 1
    return torch.cat(out, dim=1)


AUTOCAST = {"dtype": None}


def forward_context():
    """bf16 autocast on the CPU when --dtype bf16, else nothing."""
    import contextlib
    dtype = AUTOCAST["dtype"]
    return torch.autocast("cpu", dtype=dtype) if dtype is not None else contextlib.nullcontext()


def train_step(model, optimizer, ids, prompt_len, advantages, micro_batch):
    optimizer.zero_grad(set_to_none=True)
    rows, width = ids.shape
    tokens = rows * (width - prompt_len)
    valid = torch.ones(rows, width)
    for start in range(0, rows, micro_batch):
        chunk = ids[start:start + micro_batch]
        b = chunk.shape[0]
        positions = torch.arange(width)[None].expand(b, width)
        with forward_context():
            hidden = model(chunk, positions, causal_mask(valid[start:start + b], width, 0))
            logits = model.lm_head(hidden[:, prompt_len - 1:-1])
        logp = torch.log_softmax(logits.float(), dim=-1).gather(-1, chunk[:, prompt_len:, None])[..., 0]
        loss = -(logp * advantages[start:start + b]).sum() / tokens
        loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    return loss.item()


def blas_info():
    """The BLAS library torch loaded (from this process's mappings) and, for OpenBLAS, the kernels it chose."""
    path = None
    with open("/proc/self/maps") as maps:
        for line in maps:
            name = line.split()[-1]
            if "/libblas.so" in name or "/libopenblas" in name:
                path = name
                break
    if path is None:
        # PyPI's wheels link MKL in: torch's build configuration names it.
        config = torch.__config__.show()
        blas = next((part.split("=")[1] for part in config.replace(",", " ").split() if part.startswith("BLAS_INFO=")), None)
        mkldnn = " + oneDNN" if torch.backends.mkldnn.is_available() else ""
        return {"blas": f"{blas.upper()}{mkldnn}" if blas else "none found"}
    info = {"blasLibrary": path}
    try:
        lib = ctypes.CDLL(path)
        lib.openblas_get_corename.restype = ctypes.c_char_p
        lib.openblas_get_config.restype = ctypes.c_char_p
        info["blas"] = "OpenBLAS"
        info["openblasCore"] = lib.openblas_get_corename().decode()
        info["openblasConfig"] = lib.openblas_get_config().decode()
        info["openblasThreads"] = lib.openblas_get_num_threads()
    except (AttributeError, OSError):
        info["blas"] = "reference BLAS (no OpenBLAS symbols)"
    return info


def matmul_seconds(n, repeats):
    a, b = torch.randn(n, n), torch.randn(n, n)
    torch.mm(a, b)
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        torch.mm(a, b)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def training_ids(vocab):
    """The bench's 32 x 256 pseudo-random tokens (the LCG of bench/lib/workloads.mjs) and advantages."""
    seed = 7
    values = []
    for _ in range(32 * 256):
        seed = (seed * 1103515245 + 12345) % 2 ** 32
        values.append((seed >> 8) % vocab)
    ids = torch.tensor(values).view(32, 256)
    advantages = torch.tensor([((i % 7) - 3) / 3 for i in range(32 * 224)]).view(32, 224)
    return ids, advantages


def emit(record):
    record["peakRssMiB"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    print(json.dumps(record), flush=True)


def measure_generation(base, model_name, repeats):
    c = MODELS[model_name]
    torch.manual_seed(0)
    model = Decoder(c)
    model.eval()
    vocab = c["vocab"]
    prompts = torch.tensor([[(r * 31 + j * 17) % vocab for j in range(32)] for r in range(32)])
    generator = torch.Generator().manual_seed(1)
    generate(model, prompts[:2], 4, generator)
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        out = generate(model, prompts, 96, generator)
        times.append(time.perf_counter() - t)
    s = statistics.median(times)
    emit({**base, "model": model_name, "params": sum(p.numel() for p in model.parameters()), "batch": 32,
          "promptTokens": 32, "newTokens": 96, "repeats": repeats, "seconds": s, "tokensPerSecond": out.numel() / s})


def measure_training(base, model_name, repeats, micro_batch):
    c = MODELS[model_name]
    torch.manual_seed(0)
    model = Decoder(c)
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5, weight_decay=0.01)
    ids, advantages = training_ids(c["vocab"])
    train_step(model, optimizer, ids[:2, :16], 8, advantages[:2, :8], 2)
    times = []
    cpu = time.process_time()
    for _ in range(repeats):
        t = time.perf_counter()
        loss = train_step(model, optimizer, ids, 32, advantages, micro_batch)
        times.append(time.perf_counter() - t)
    cpu_seconds = (time.process_time() - cpu) / repeats
    s = statistics.median(times)
    emit({**base, "model": model_name, "params": sum(p.numel() for p in model.parameters()), "rows": 32,
          "tokensPerRow": 256, "microBatchSize": micro_batch, "repeats": repeats, "seconds": s, "cpuSeconds": cpu_seconds,
          "tokensPerSecond": 32 * 256 / s, "loss": loss})


def measure_matmul(base, n, repeats):
    s = matmul_seconds(n, repeats)
    emit({**base, "size": n, "repeats": repeats, "seconds": s, "gflops": 2 * n ** 3 / s / 1e9})


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("bench", choices=["generate", "train", "matmul", "probe"])
    parser.add_argument("model", nargs="?", default="tiny")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--micro-batch", type=int, default=32)
    parser.add_argument("--matmul-size", type=int, default=2048)
    parser.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)))
    parser.add_argument("--dtype", choices=["fp32", "bf16"], default="fp32")
    args = parser.parse_args()
    AUTOCAST["dtype"] = torch.bfloat16 if args.dtype == "bf16" else None
    threads = args.threads
    torch.set_num_threads(threads)
    blas = blas_info()
    kernels = f", {blas['openblasCore']} kernels" if "openblasCore" in blas else ""
    variant = " (OpenMP build)" if "openmp" in blas.get("blasLibrary", "") else ""
    precision = ", bf16 autocast" if args.dtype == "bf16" else ""
    openblas = (f", OPENBLAS_NUM_THREADS {os.environ.get('OPENBLAS_NUM_THREADS', 'unset')}, "
                f"OPENBLAS_CORETYPE {os.environ.get('OPENBLAS_CORETYPE', 'unset')}") if blas["blas"] == "OpenBLAS" else ""
    runtime = f"torch {torch.__version__} (CPU, {threads} intra-op threads, {blas['blas']}{variant}{kernels}{openblas}{precision})"
    base = {"engine": "pytorch", **blas, "intraOpThreads": threads, "runtime": runtime}
    if args.bench == "matmul":
        measure_matmul({**base, "bench": "matmul"}, args.matmul_size, args.repeats)
    elif args.bench == "generate":
        measure_generation({**base, "bench": "generate"}, args.model, args.repeats)
    elif args.bench == "train":
        measure_training({**base, "bench": "train"}, args.model, args.repeats, args.micro_batch)
    else:
        # One setting of the grid: one training round, one generation run and a matmul, each after a warm-up.
        measure_training({**base, "bench": "probe-train"}, args.model, args.repeats, args.micro_batch)
        measure_generation({**base, "bench": "probe-generate"}, args.model, args.repeats)
        measure_matmul({**base, "bench": "probe-matmul"}, args.matmul_size, 3)


if __name__ == "__main__":
    main()
