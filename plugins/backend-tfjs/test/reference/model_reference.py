"""Independent float64 reference of the Llama / Qwen2 / Qwen3 decoder forward pass.

Written from the math of transformers' modeling_llama.py / modeling_qwen2.py / modeling_qwen3.py (RMSNorm,
rotate_half rotary embedding with llama3 rope scaling, grouped-query attention, SwiGLU MLP, tied embeddings),
without importing transformers. Reads config.json + model.safetensors (own reader) and prints logits as JSON.

usage: model_reference.py IDS_JSON CHECKPOINT_DIR...
  IDS_JSON: a list of rows of token ids, e.g. [[1,2,3],[4,5]]; each row runs unpadded at positions 0..n-1.
prints: {CHECKPOINT_DIR: [[[...vocab] per position] per row], ...}
"""
import json
import math
import struct
import sys

import numpy as np
import torch

DTYPES = {"F32": np.float32, "F64": np.float64, "F16": np.float16}


def read_safetensors(path):
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        begin, end = entry["data_offsets"]
        if entry["dtype"] == "BF16":
            raw = np.frombuffer(data[begin:end], dtype=np.uint16).astype(np.uint32) << 16
            arr = raw.view(np.float32)
        else:
            arr = np.frombuffer(data[begin:end], dtype=DTYPES[entry["dtype"]])
        out[name] = torch.from_numpy(arr.astype(np.float64).reshape(entry["shape"]))
    return out


def inv_freq_of(cfg, head_dim):
    base = cfg.get("rope_theta", 10000.0)
    inv_freq = 1.0 / (base ** (torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim))
    scaling = cfg.get("rope_scaling")
    if scaling:
        kind = scaling.get("rope_type", scaling.get("type", "default"))
        if kind == "linear":
            inv_freq = inv_freq / scaling["factor"]
        elif kind == "llama3":
            factor = scaling["factor"]
            low, high = scaling["low_freq_factor"], scaling["high_freq_factor"]
            old = scaling["original_max_position_embeddings"]
            low_wavelen, high_wavelen = old / low, old / high
            wavelen = 2 * math.pi / inv_freq
            scaled = torch.where(wavelen > low_wavelen, inv_freq / factor, inv_freq)
            smooth = (old / wavelen - low) / (high - low)
            smoothed = (1 - smooth) * scaled / factor + smooth * scaled
            medium = ~(wavelen < high_wavelen) * ~(wavelen > low_wavelen)
            inv_freq = torch.where(medium, smoothed, scaled)
        elif kind != "default":
            raise SystemExit(f"unsupported rope type {kind}")
    return inv_freq


def rms_norm(x, w, eps):
    return w * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps))


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


def forward(cfg, w, ids):
    arch = (cfg.get("architectures") or [""])[0]
    model_type = cfg.get("model_type")
    is_qwen2 = arch == "Qwen2ForCausalLM" or model_type == "qwen2"
    is_qwen3 = arch == "Qwen3ForCausalLM" or model_type == "qwen3"
    hidden = cfg["hidden_size"]
    heads = cfg["num_attention_heads"]
    kv_heads = cfg.get("num_key_value_heads") or heads
    head_dim = cfg.get("head_dim") or hidden // heads
    eps = cfg.get("rms_norm_eps", 1e-6)
    attn_bias = cfg.get("attention_bias", False)
    qkv_bias = True if is_qwen2 else attn_bias
    o_bias = False if is_qwen2 else attn_bias
    mlp_bias = cfg.get("mlp_bias", False) and not (is_qwen2 or is_qwen3)
    tied = cfg.get("tie_word_embeddings", False)

    def lin(x, name, bias):
        y = x @ w[name + ".weight"].T
        return y + w[name + ".bias"] if bias else y

    t = len(ids)
    x = w["model.embed_tokens.weight"][torch.tensor(ids, dtype=torch.long)]  # [T, H]
    pos = torch.arange(t, dtype=torch.float64)
    freqs = torch.outer(pos, inv_freq_of(cfg, head_dim))
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos()[None], emb.sin()[None]  # [1, T, D]
    causal = torch.full((t, t), float("-inf"), dtype=torch.float64).triu(1)
    for i in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{i}"
        h = rms_norm(x, w[f"{p}.input_layernorm.weight"], eps)
        q = lin(h, f"{p}.self_attn.q_proj", qkv_bias).view(t, heads, head_dim).transpose(0, 1)
        k = lin(h, f"{p}.self_attn.k_proj", qkv_bias).view(t, kv_heads, head_dim).transpose(0, 1)
        v = lin(h, f"{p}.self_attn.v_proj", qkv_bias).view(t, kv_heads, head_dim).transpose(0, 1)
        if is_qwen3:
            q = rms_norm(q, w[f"{p}.self_attn.q_norm.weight"], eps)
            k = rms_norm(k, w[f"{p}.self_attn.k_norm.weight"], eps)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        k = k.repeat_interleave(heads // kv_heads, dim=0)
        v = v.repeat_interleave(heads // kv_heads, dim=0)
        scores = q @ k.transpose(1, 2) / math.sqrt(head_dim) + causal
        attn = torch.softmax(scores, dim=-1) @ v  # [heads, T, D]
        x = x + lin(attn.transpose(0, 1).reshape(t, heads * head_dim), f"{p}.self_attn.o_proj", o_bias)
        h = rms_norm(x, w[f"{p}.post_attention_layernorm.weight"], eps)
        gate = lin(h, f"{p}.mlp.gate_proj", mlp_bias)
        up = lin(h, f"{p}.mlp.up_proj", mlp_bias)
        x = x + lin(torch.nn.functional.silu(gate) * up, f"{p}.mlp.down_proj", mlp_bias)
    x = rms_norm(x, w["model.norm.weight"], eps)
    head = w["model.embed_tokens.weight"] if tied else w["lm_head.weight"]
    return x @ head.T


def main():
    rows = json.loads(sys.argv[1])
    out = {}
    for ckpt in sys.argv[2:]:
        with open(f"{ckpt}/config.json") as f:
            cfg = json.load(f)
        w = read_safetensors(f"{ckpt}/model.safetensors")
        with torch.no_grad():
            out[ckpt] = [forward(cfg, w, row).tolist() for row in rows]
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
