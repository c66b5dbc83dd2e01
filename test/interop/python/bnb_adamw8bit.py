"""bitsandbytes' AdamW8bit on the CPU, the reference of drmas's `optimizer.moments: 8bit` (test/interop/bitsandbytes.test.ts).

Usage: bnb_adamw8bit.py DIR. DIR/case.json names the run ({"sizes": [...], "steps", "lr", "betas", "eps",
"weight_decay"}); DIR/init.f32 holds each parameter's initial values one after another, DIR/grads.f32 each step's
gradients in the same layout, DIR/quantize.f32 values to quantize. Written to DIR: qmap_signed.f32, qmap_unsigned.f32
(create_dynamic_map), quantize.u8 and quantize_absmax.f32 (quantize_blockwise of quantize.f32 on the signed map, blocks
of 256), and per parameter i: p<i>.f32 (its values after the steps) and its state, state1/state2 as uint8 codes with
absmax1/absmax2 for an 8-bit state, or as float32 for a parameter under min_8bit_size.

bitsandbytes' native CPU library is withheld, so its PyTorch kernels run (bitsandbytes/backends/default/ops.py:
quantize_blockwise by torch.bucketize on the map's midpoints), as its CUDA kernels quantize; the library's CPU
quantizer rounds through a table of 65,536 bins first.
"""
import ctypes
import json
import sys
from pathlib import Path

_load = ctypes.cdll.LoadLibrary


def _withhold(path, *args, **kwargs):
    if "bitsandbytes" in str(path):
        raise OSError("native library withheld: bitsandbytes' PyTorch kernels run")
    return _load(path, *args, **kwargs)


ctypes.cdll.LoadLibrary = _withhold

import numpy as np  # noqa: E402
import torch  # noqa: E402
import bitsandbytes as bnb  # noqa: E402
import bitsandbytes.functional as F  # noqa: E402

out = Path(sys.argv[1])
case = json.loads((out / "case.json").read_text())
sizes = case["sizes"]


def save(name, tensor, dtype):
    (out / name).write_bytes(tensor.detach().cpu().numpy().astype(dtype).tobytes())


save("qmap_signed.f32", F.create_dynamic_map(signed=True), np.float32)
save("qmap_unsigned.f32", F.create_dynamic_map(signed=False), np.float32)
values = torch.from_numpy(np.fromfile(out / "quantize.f32", dtype=np.float32))
codes, state = F.quantize_blockwise(values, code=F.create_dynamic_map(signed=True), blocksize=256)
save("quantize.u8", codes, np.uint8)
save("quantize_absmax.f32", state.absmax, np.float32)

init = np.fromfile(out / "init.f32", dtype=np.float32)
grads = np.fromfile(out / "grads.f32", dtype=np.float32).reshape(case["steps"], -1)
offsets = np.cumsum([0] + sizes)
params = [torch.nn.Parameter(torch.from_numpy(init[offsets[i] : offsets[i + 1]].copy())) for i in range(len(sizes))]
optimizer = bnb.optim.AdamW8bit(
    params, lr=case["lr"], betas=tuple(case["betas"]), eps=case["eps"], weight_decay=case["weight_decay"]
)
for step in range(case["steps"]):
    for i, p in enumerate(params):
        p.grad = torch.from_numpy(grads[step, offsets[i] : offsets[i + 1]].copy())
    optimizer.step()
for i, p in enumerate(params):
    save(f"p{i}.f32", p, np.float32)
    st = optimizer.state[p]
    if st["state1"].dtype == torch.uint8:
        save(f"p{i}.state1.u8", st["state1"], np.uint8)
        save(f"p{i}.state2.u8", st["state2"], np.uint8)
        save(f"p{i}.absmax1.f32", st["absmax1"], np.float32)
        save(f"p{i}.absmax2.f32", st["absmax2"], np.float32)
    else:
        save(f"p{i}.state1.f32", st["state1"], np.float32)
        save(f"p{i}.state2.f32", st["state2"], np.float32)
print(json.dumps({"bitsandbytes": bnb.__version__, "torch": torch.__version__}))
