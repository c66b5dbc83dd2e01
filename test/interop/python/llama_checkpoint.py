"""A small random Llama checkpoint in Hugging Face layout (float32 safetensors) with the math preset's tokenizer, for
servers whose model code has no Qwen2 (SkyRL tx's JAX backend: Llama 3, Qwen3, Qwen3.5, DeepSeek V3).

  llama_checkpoint.py TOKENIZER_DIR OUT_DIR
"""

import shutil
import sys
from pathlib import Path

import torch
from transformers import LlamaConfig, LlamaForCausalLM

tokenizer_dir, out = Path(sys.argv[1]), Path(sys.argv[2])
torch.manual_seed(0)
config = LlamaConfig(
    vocab_size=512,
    hidden_size=64,
    intermediate_size=128,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
    max_position_embeddings=512,
    rms_norm_eps=1e-6,
    tie_word_embeddings=False,
    bos_token_id=510,
    eos_token_id=510,
    pad_token_id=511,
)
LlamaForCausalLM(config).to(torch.float32).save_pretrained(out, safe_serialization=True)
for name in ("tokenizer.json", "tokenizer_config.json"):
    shutil.copy(tokenizer_dir / name, out / name)
print(out)
