"""DPO losses in torch float64, written from TRL's DPOTrainer (trl/trainer/dpo_trainer.py, `_compute_loss`), for
plugins/backend-tfjs/test/dpoTorchReference.test.ts. Reads cases as JSON on stdin, writes results as JSON on stdout.

A case: per-token policy and reference log-probs and the completion mask, rows [chosen 0, rejected 0, chosen 1, ...]
(TRL concatenates [chosen..., rejected...]; only the pairing differs). Returns the loss (mean over pairs), TRL's
metrics and d loss / d policy per-token log-probs, by autograd.
"""
import json
import sys

import torch
import torch.nn.functional as F


def run(case):
    logps_tok = torch.tensor(case["logProbs"], dtype=torch.float64, requires_grad=True)
    ref_tok = torch.tensor(case["refLogProbs"], dtype=torch.float64)
    mask = torch.tensor(case["mask"], dtype=torch.float64)
    beta = case["beta"]
    eps = case.get("labelSmoothing", 0.0)
    logps = (logps_tok * mask).sum(dim=1)  # sum over the completion (TRL's default, ld_alpha None)
    ref_logps = (ref_tok * mask).sum(dim=1)
    chosen_logps, rejected_logps = logps[0::2], logps[1::2]
    ref_chosen_logps, ref_rejected_logps = ref_logps[0::2], ref_logps[1::2]
    chosen_logratios = chosen_logps - ref_chosen_logps
    rejected_logratios = rejected_logps - ref_rejected_logps
    delta_score = chosen_logratios - rejected_logratios
    variant = case["variant"]
    if variant == "sigmoid":
        # cDPO smoothing as TRL <= 0.2x wrote it; with eps 0 it is today's TRL sigmoid loss
        losses = -F.logsigmoid(beta * delta_score) * (1 - eps) - F.logsigmoid(-beta * delta_score) * eps
    elif variant == "robust":
        clean = -(1 - eps) * F.logsigmoid(beta * delta_score)
        flipped = -eps * F.logsigmoid(-beta * delta_score)
        losses = (clean - flipped) / (1 - 2 * eps)
    elif variant == "hinge":
        losses = torch.relu(1 - beta * delta_score)
    elif variant == "ipo":
        chosen_mask, rejected_mask = mask[0::2], mask[1::2]
        chosen_avg = chosen_logratios / chosen_mask.sum(dim=1).clamp(min=1.0)
        rejected_avg = rejected_logratios / rejected_mask.sum(dim=1).clamp(min=1.0)
        losses = (chosen_avg - rejected_avg - 1 / (2 * beta)) ** 2
    else:
        raise ValueError(variant)
    loss = losses.mean()
    loss.backward()
    chosen_rewards = beta * chosen_logratios.detach()
    rejected_rewards = beta * rejected_logratios.detach()
    return {
        "loss": loss.item(),
        "grad": logps_tok.grad.tolist(),
        "metrics": {
            "rewards/chosen": chosen_rewards.mean().item(),
            "rewards/rejected": rejected_rewards.mean().item(),
            "rewards/accuracies": (chosen_rewards > rejected_rewards).double().mean().item(),
            "rewards/margins": (chosen_rewards - rejected_rewards).mean().item(),
            "logps/chosen": chosen_logps.detach().mean().item(),
            "logps/rejected": rejected_logps.detach().mean().item(),
        },
    }


json.dump([run(case) for case in json.load(sys.stdin)], sys.stdout)
