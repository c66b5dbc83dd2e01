#!/usr/bin/python3
"""
Reference cases for @drmas/plugin-algorithms, written to cases.json.

An independent transcription, in torch float64, of the published formulas of veRL
(verl/trainer/ppo/core_algos.py and verl/utils/torch_functional.py) and verl-agent's GiGPO
(gigpo/core_gigpo.py). The multi-agent parts that veRL does not have (trajectory-averaged GRPO and
Dr. MAS per-agent groups) follow the package specification. Run with Debian's python (torch 1.13):

    /usr/bin/python3 plugins/algorithms/test/reference/generate_reference.py
"""
import json
import math
import os
import random
from collections import defaultdict
from difflib import SequenceMatcher

import torch

torch.set_default_dtype(torch.float64)
T = lambda x: torch.tensor(x, dtype=torch.float64)


# ---------------------------------------------------------------- veRL torch_functional
def masked_sum(values, mask):
    return (torch.where(mask.bool(), values, torch.zeros_like(values)) * mask).sum()


def masked_mean(values, mask):
    return masked_sum(values, mask) / (mask.sum() + 1e-8)


def masked_var(values, mask):
    mean = masked_mean(values, mask)
    var = masked_mean((values - mean) ** 2, mask)
    n = mask.sum()
    assert n > 1
    return var * (n / (n - 1))


def masked_whiten(values, mask):
    mean, var = masked_mean(values, mask), masked_var(values, mask)
    return (values - mean) * torch.rsqrt(var + 1e-8)


# ---------------------------------------------------------------- advantage estimators
def group_mean_std(scores, index):
    id2score = defaultdict(list)
    for i in range(len(index)):
        id2score[index[i]].append(scores[i])
    mean, std, size = {}, {}, {}
    for k, v in id2score.items():
        size[k] = len(v)
        if len(v) == 1:
            mean[k], std[k] = T(0.0), T(1.0)
        else:
            s = torch.stack(v)
            mean[k], std[k] = torch.mean(s), torch.std(s)
    return mean, std, size


def grpo(tr, mask, index, eps, norm):
    scores = tr.sum(-1)
    mean, std, _ = group_mean_std(scores, index)
    out = scores.clone()
    for i in range(len(index)):
        out[i] = (scores[i] - mean[index[i]]) / (std[index[i]] + eps) if norm else scores[i] - mean[index[i]]
    adv = out.unsqueeze(-1) * mask
    return adv, adv


def grpo_trajectory_averaged(tr, mask, index, traj, eps, norm):
    """Multi-agent GRPO: each trajectory's rows are averaged into one sample of its prompt group."""
    scores = tr.sum(-1)
    members = defaultdict(list)
    for i in range(len(index)):
        members[(index[i], traj[i])].append(i)
    key_list = list(members.keys())
    traj_score = {k: torch.stack([scores[i] for i in members[k]]).mean() for k in key_list}
    samples = [traj_score[k] for k in key_list]
    mean, std, _ = group_mean_std(samples, [k[0] for k in key_list])
    out = scores.clone()
    for i in range(len(index)):
        k = (index[i], traj[i])
        g = index[i]
        out[i] = (traj_score[k] - mean[g]) / (std[g] + eps) if norm else traj_score[k] - mean[g]
    adv = out.unsqueeze(-1) * mask
    return adv, adv


def grpo_passk(tr, mask, index, eps, norm):
    scores = tr.sum(-1)
    adv = torch.zeros_like(scores)
    id2scores, id2idx = defaultdict(list), defaultdict(list)
    for i in range(len(index)):
        id2scores[index[i]].append(scores[i])
        id2idx[index[i]].append(i)
    for k in id2scores:
        rewards = torch.stack(id2scores[k])
        assert rewards.numel() >= 2
        topk, topk_idx = torch.topk(rewards, 2)
        a = topk[0] - topk[1]
        if norm:
            a = a / (torch.std(rewards) + eps)
        adv[id2idx[k][topk_idx[0].item()]] = a
    adv = adv.unsqueeze(-1) * mask
    return adv, adv


def rloo(tr, mask, index):
    scores = tr.sum(-1)
    mean, _, size = group_mean_std(scores, index)
    out = scores.clone()
    for i in range(len(index)):
        n = size[index[i]]
        if n > 1:
            out[i] = scores[i] * n / (n - 1) - mean[index[i]] * n / (n - 1)
    adv = out.unsqueeze(-1) * mask
    return adv, adv


def opo(tr, mask, index):
    lengths = mask.sum(-1)
    scores = tr.sum(-1)
    id2s, id2l = defaultdict(list), defaultdict(list)
    for i in range(len(index)):
        id2s[index[i]].append(scores[i])
        id2l[index[i]].append(lengths[i])
    bsl = {}
    for k in id2s:
        if len(id2s[k]) == 1:
            bsl[k] = T(0.0)
        else:
            s, l = torch.stack(id2s[k]), torch.stack(id2l[k])
            bsl[k] = (l * s).sum() / l.sum()
    out = scores.clone()
    for i in range(len(index)):
        out[i] = scores[i] - bsl[index[i]]
    adv = out.unsqueeze(-1) * mask
    return adv, adv


def gpg(tr, mask, index):
    scores = tr.sum(-1)
    bsz = scores.shape[0]
    alpha = bsz / torch.count_nonzero(scores).clamp(min=1)
    mean, _, _ = group_mean_std(scores, index)
    out = scores.clone()
    for i in range(bsz):
        out[i] = alpha * (scores[i] - mean[index[i]]) / 1.0
    adv = out.unsqueeze(-1) * mask
    return adv, adv


def reinforce_pp(tr, mask, gamma):
    returns = torch.zeros_like(tr)
    running = 0
    for t in reversed(range(tr.shape[1])):
        running = tr[:, t] + gamma * running
        returns[:, t] = running
        running = running * mask[:, t]
    adv = masked_whiten(returns, mask) * mask
    return adv, returns


def reinforce_pp_baseline(tr, mask, index):
    L = tr.shape[-1]
    scores = tr.sum(-1)
    mean, _, _ = group_mean_std(scores, index)
    out = scores.clone()
    for i in range(len(index)):
        out[i] = scores[i] - mean[index[i]]
    s = out.unsqueeze(-1).tile([1, L]) * mask
    s = masked_whiten(s, mask) * mask
    return s, s


def remax(tr, mask, baselines):
    returns = (tr * mask).flip(dims=[-1]).cumsum(dim=-1).flip(dims=[-1])
    adv = returns - baselines.unsqueeze(-1) * mask
    return adv, returns


def gae(tr, values, mask, gamma, lam):
    nextvalues, lastgaelam = 0, 0
    rev = []
    for t in reversed(range(tr.shape[-1])):
        delta = tr[:, t] + gamma * nextvalues - values[:, t]
        lastgaelam_ = delta + gamma * lam * lastgaelam
        nextvalues = values[:, t] * mask[:, t] + (1 - mask[:, t]) * nextvalues
        lastgaelam = lastgaelam_ * mask[:, t] + (1 - mask[:, t]) * lastgaelam
        rev.append(lastgaelam)
    adv = torch.stack(rev[::-1], dim=1)
    returns = adv + values
    return masked_whiten(adv, mask), returns


def gigpo(tr, mask, index, step_rewards, anchors, eps, w, mode, threshold):
    remove_std = mode == "mean_norm"
    L = tr.shape[-1]
    # episode_norm_reward, every row a sample of its prompt group
    scores = tr.sum(-1)
    mean, std, _ = group_mean_std(scores, index)
    ep = scores.clone()
    for i in range(len(index)):
        ep[i] = scores[i] - mean[index[i]] if remove_std else (scores[i] - mean[index[i]]) / (std[index[i]] + eps)
    ep = ep.unsqueeze(-1).tile([1, L]) * mask
    # build_step_group
    step_uid = [None] * len(anchors)
    n_clusters = 0
    for idx in sorted(set(index), key=str):
        locs = [i for i in range(len(index)) if index[i] == idx]
        if threshold is None:
            clusters = {}
            for i in locs:
                clusters.setdefault(anchors[i], []).append(i)
            groups = list(clusters.values())
        else:
            cl = []
            for i in locs:
                for c in cl:
                    if SequenceMatcher(None, anchors[i], c["rep"]).ratio() >= threshold:
                        c["locs"].append(i)
                        break
                else:
                    cl.append({"rep": anchors[i], "locs": [i]})
            groups = [c["locs"] for c in cl]
        for g in groups:
            for i in g:
                step_uid[i] = n_clusters
            n_clusters += 1
    # step_norm_reward
    id2 = defaultdict(list)
    for i in range(len(index)):
        id2[step_uid[i]].append(step_rewards[i])
    smean, sstd = {}, {}
    for k, v in id2.items():
        smean[k] = torch.mean(torch.stack(v))
        sstd[k] = T(1.0) if len(v) == 1 else torch.std(torch.stack(v))
    st = step_rewards.clone()
    for i in range(len(index)):
        k = step_uid[i]
        st[i] = step_rewards[i] - smean[k] if remove_std else (step_rewards[i] - smean[k]) / (sstd[k] + eps)
    st = st.unsqueeze(-1).tile([1, L]) * mask
    s = ep + w * st
    return s, s


# ---------------------------------------------------------------- losses
def agg_loss(loss_mat, loss_mask, mode, loss_scale_factor=None):
    if mode == "token-mean":
        return masked_sum(loss_mat, loss_mask) / loss_mask.sum()
    if mode == "seq-mean-token-sum":
        seq = torch.sum(loss_mat * loss_mask, dim=-1)
        seq_mask = (torch.sum(loss_mask, dim=-1) > 0).double()
        return masked_sum(seq, seq_mask) / seq_mask.sum()
    if mode == "seq-mean-token-mean":
        cnt = torch.sum(loss_mask, dim=-1)
        seq = torch.sum(loss_mat * loss_mask, dim=-1) / (cnt + 1e-8)
        seq_mask = (cnt > 0).double()
        return masked_sum(seq, seq_mask) / seq_mask.sum()
    if mode == "seq-mean-token-sum-norm":
        seq = torch.sum(loss_mat * loss_mask, dim=-1)
        if loss_scale_factor is None:
            loss_scale_factor = loss_mask.shape[-1]
        return torch.sum(seq) / loss_scale_factor
    raise ValueError(mode)


def policy_vanilla(old, logp, adv, mask, agg, low, high, c, w):
    neg_kl = torch.clamp(logp - old, min=-20.0, max=20.0)
    ratio = torch.exp(neg_kl)
    ppo_kl = masked_mean(-neg_kl, mask)
    l1 = -adv * ratio
    l2 = -adv * torch.clamp(ratio, 1 - low, 1 + high)
    c1 = torch.maximum(l1, l2)
    clipfrac = masked_mean(torch.gt(l2, l1).double(), mask)
    l3 = -adv * c
    c2 = torch.min(l3, c1)
    clipfrac_lower = masked_mean(torch.gt(c1, l3) * (adv < 0).double(), mask)
    pg = torch.where(adv < 0, c2, c1)
    if w is not None:
        pg = pg * w
    return agg_loss(pg, mask, agg), clipfrac, clipfrac_lower, ppo_kl


def policy_gspo(old, logp, adv, mask, agg, low, high, c, w):
    neg_kl = logp - old
    seq_len = torch.sum(mask, dim=-1).clamp(min=1)
    neg_kl_seq = torch.sum(neg_kl * mask, dim=-1) / seq_len
    log_ratio = logp - logp.detach() + neg_kl_seq.detach().unsqueeze(-1)
    log_ratio = torch.clamp(log_ratio, max=10.0)
    ratio = torch.exp(log_ratio)
    l1 = -adv * ratio
    l2 = -adv * torch.clamp(ratio, 1 - low, 1 + high)
    pg = torch.maximum(l1, l2)
    if w is not None:
        pg = pg * w
    loss = agg_loss(pg, mask, agg)
    clipfrac = masked_mean(torch.gt(l2, l1).double(), mask)
    return loss, clipfrac, T(0.0), masked_mean(-neg_kl, mask)


def policy_cispo(old, logp, adv, mask, agg, low, high, c, w):
    neg_kl = torch.clamp(logp - old, min=-20.0, max=20.0)
    ratio = torch.exp(neg_kl)
    ppo_kl = masked_mean(-neg_kl, mask)
    clipped = torch.clamp(ratio, 1 - low, 1 + high)
    pg = -clipped.detach() * adv * logp
    clipfrac = masked_mean((ratio != clipped).double(), mask)
    if w is not None:
        pg = pg * w
    return agg_loss(pg, mask, agg), clipfrac, T(0.0), ppo_kl


def policy_gpg(old, logp, adv, mask, agg, low, high, c, w):
    pg = -logp * adv
    if w is not None:
        pg = pg * w
    return agg_loss(pg, mask, agg), T(0.0), T(0.0), masked_mean(-(logp - old), mask)


POLICY = {"vanilla": policy_vanilla, "gspo": policy_gspo, "cispo": policy_cispo, "gpg": policy_gpg}


def kl_penalty(logp, ref, kind):
    if kind in ("kl", "k1"):
        return logp - ref
    if kind == "abs":
        return (logp - ref).abs()
    if kind in ("mse", "k2"):
        return 0.5 * (logp - ref).square()
    if kind in ("low_var_kl", "k3"):
        kl = torch.clamp(ref - logp, min=-20, max=20)
        return torch.clamp(torch.exp(kl) - kl - 1, min=-10, max=10)
    raise ValueError(kind)


def value_loss(vpreds, returns, values, mask, clip, agg):
    clipped = torch.max(torch.min(vpreds, values + clip), values - clip)
    l1 = (vpreds - returns) ** 2
    l2 = (clipped - returns) ** 2
    loss = 0.5 * agg_loss(torch.max(l1, l2), mask, agg)
    return loss, masked_mean(torch.gt(l2, l1).double(), mask)


def entropy_from_logits(logits):
    pd = torch.nn.functional.softmax(logits, dim=-1)
    return torch.logsumexp(logits, dim=-1) - torch.sum(pd * logits, dim=-1)


# ---------------------------------------------------------------- case generation
rng = random.Random(20250601)
torch.manual_seed(20250601)
AGGS = ["token-mean", "seq-mean-token-sum", "seq-mean-token-mean", "seq-mean-token-sum-norm"]


def L(t):
    return t.tolist()


def random_mask(rows, cols, holes=True):
    m = []
    for _ in range(rows):
        n = rng.randint(1, cols)
        row = [1.0] * n + [0.0] * (cols - n)
        if holes and n > 2 and rng.random() < 0.5:
            row[rng.randint(1, n - 2)] = 0.0
        m.append(row)
    return m


def random_rewards(mask, dense=False, pad_reward=False):
    rows, cols = len(mask), len(mask[0])
    r = [[0.0] * cols for _ in range(rows)]
    for i in range(rows):
        last = max(t for t in range(cols) if mask[i][t] > 0)
        r[i][last] = float(rng.choice([0, 1, 1, 0.5, -1, 2.5]))
        if dense:
            for t in range(cols):
                if rng.random() < 0.3:
                    r[i][t] += round(rng.uniform(-1, 1), 3)
        if pad_reward and last + 1 < cols and rng.random() < 0.5:
            r[i][last + 1] = 0.75
    return r


def random_groups(rows, k):
    return [f"g{rng.randrange(k)}" for _ in range(rows)]


advantage_cases = []


def add_adv(name, estimator, inp, options, adv, ret):
    advantage_cases.append({"name": name, "estimator": estimator, "input": inp, "options": options,
                            "expected": {"advantages": L(adv), "returns": L(ret)}})


def outcome(name, estimator, inp, options):
    tr, m = T(inp["tokenRewards"]), T(inp["responseMask"])
    idx = inp["groupIds"]
    eps = options.get("epsilon", 1e-6)
    norm = options.get("normalizeByStd", True)
    if estimator in ("grpo", "dapo"):
        if "trajectoryIds" in inp:
            a, r = grpo_trajectory_averaged(tr, m, idx, inp["trajectoryIds"], eps, norm)
        else:
            a, r = grpo(tr, m, idx, eps, norm)
    elif estimator == "drmas":
        a, r = grpo(tr, m, [f"{g}\u0000{ag}" for g, ag in zip(idx, inp["agentIds"])], eps, norm)
    elif estimator == "grpo_passk":
        a, r = grpo_passk(tr, m, idx, eps, norm)
    elif estimator == "rloo":
        a, r = rloo(tr, m, idx)
    elif estimator == "opo":
        a, r = opo(tr, m, idx)
    elif estimator == "gpg":
        a, r = gpg(tr, m, idx)
    elif estimator == "reinforce_plus_plus":
        a, r = reinforce_pp(tr, m, options.get("gamma", 1.0))
    elif estimator == "reinforce_plus_plus_baseline":
        a, r = reinforce_pp_baseline(tr, m, idx)
    elif estimator == "remax":
        a, r = remax(tr, m, T(inp["baselineRewards"]))
    elif estimator == "gae":
        a, r = gae(tr, T(inp["values"]), m, options.get("gamma", 1.0), options.get("lam", 1.0))
    elif estimator == "gigpo":
        a, r = gigpo(tr, m, idx, T(inp["stepRewards"]), inp["anchorObservations"], eps,
                     options.get("stepAdvantageWeight", 1.0), options.get("gigpoMode", "mean_norm"),
                     options.get("similarityThreshold"))
    else:
        raise ValueError(estimator)
    add_adv(name, estimator, inp, options, a, r)


# hand-chosen edge cases
pad = {"tokenRewards": [[0, 0, 1, 0], [0, 0, 0, 0], [0, 2, 0, 0], [0, 0, 0, 0.5], [1, 0, 0, 0]],
       "responseMask": [[1, 1, 1, 0], [1, 1, 0, 0], [1, 1, 0, 0], [1, 1, 1, 0], [1, 0, 1, 1]],
       "groupIds": ["a", "a", "a", "b", "c"]}  # row 3: reward on a padded token; row 4: mask with a hole; c: group of one
equal = {"tokenRewards": [[0, 1], [0, 1], [1, 0], [0, 0], [0, 0]],
         "responseMask": [[1, 1], [1, 1], [1, 0], [1, 1], [1, 1]], "groupIds": ["x", "x", "x", "y", "y"]}
for est in ["grpo", "rloo", "opo", "gpg", "reinforce_plus_plus_baseline", "dapo"]:
    outcome(f"{est}: padding, reward on a padded token, hole, group of one", est, pad, {})
    outcome(f"{est}: equal rewards", est, equal, {})
outcome("grpo: Dr. GRPO (no std)", "grpo", pad, {"normalizeByStd": False})
outcome("grpo: epsilon 0.1", "grpo", pad, {"epsilon": 0.1})
multi = {"tokenRewards": [[1, 0], [0, 0], [0, 0], [0, 1], [0, 0], [0, 2]],
         "responseMask": [[1, 1], [1, 0], [1, 1], [1, 1], [1, 1], [1, 1]],
         "groupIds": ["p", "p", "p", "p", "p", "q"], "trajectoryIds": ["t1", "t1", "t2", "t2", "t3", "t4"],
         "agentIds": ["planner", "solver", "planner", "solver", "planner", "solver"]}
outcome("grpo: trajectories averaged (multi-agent)", "grpo", multi, {})
outcome("drmas: per-agent groups", "drmas", multi, {})
outcome("drmas: per-agent groups, no std", "drmas", multi, {"normalizeByStd": False})
passk = {"tokenRewards": [[0, 1], [0, 3], [0, 2], [1, 0], [1, 0]], "responseMask": [[1, 1], [1, 1], [1, 0], [1, 1], [1, 1]],
         "groupIds": ["a", "a", "a", "b", "b"]}
outcome("grpo_passk: best row only; tie gives 0", "grpo_passk", passk, {})
outcome("grpo_passk: no std", "grpo_passk", passk, {"normalizeByStd": False})
outcome("reinforce_plus_plus: padding and holes", "reinforce_plus_plus", pad, {"gamma": 0.9})
outcome("remax: baseline", "remax", {**pad, "baselineRewards": [0.5, 0, 1, 0.25, -1]}, {})
gae_in = {**pad, "values": [[0.1, 0.2, 0.3, 0.4], [0.5, -0.5, 0.2, 0], [0, 0, 0, 0], [1, 1, 1, 1], [0.3, 9, 0.1, 0.2]]}
outcome("gae: gamma 0.9 lam 0.95, hole skipped in the chain", "gae", gae_in, {"gamma": 0.9, "lam": 0.95})
outcome("gae: defaults", "gae", gae_in, {})
gig = {"tokenRewards": [[0, 1], [0, 1], [0, 0], [0, 0], [0, 1], [0, 5]], "responseMask": [[1, 1], [1, 0], [1, 1], [1, 1], [1, 1], [1, 1]],
       "groupIds": ["a", "a", "a", "a", "b", "c"], "stepRewards": [1.0, 0.9, 0.5, 0.0, 0.3, 2.0],
       "anchorObservations": ["room 1", "room 1", "room 2", "room 1", "room 1", "room 9"]}
outcome("gigpo: mean_norm, step group of one", "gigpo", gig, {})
outcome("gigpo: mean_std_norm, w 0.5", "gigpo", gig, {"gigpoMode": "mean_std_norm", "stepAdvantageWeight": 0.5})
gig_sim = {**gig, "anchorObservations": ["You are in room 1.", "You are in room 2.", "You are in the hall.",
                                          "You are in room 1!", "x", "y"]}
outcome("gigpo: similarity clustering 0.9", "gigpo", gig_sim, {"similarityThreshold": 0.9})
long_a = "the kitchen has a table and a chair. " * 7
long_b = long_a.replace("chair", "stool", 2)
gig_long = {**gig, "anchorObservations": [long_a, long_b, long_a + "!", "short", long_b, "z"]}
outcome("gigpo: similarity on long observations (autojunk)", "gigpo", gig_long, {"similarityThreshold": 0.95})

# seeded random cases
for k in range(6):
    rows, cols = rng.randint(6, 12), rng.randint(4, 8)
    m = random_mask(rows, cols)
    tr = random_rewards(m, dense=(k % 2 == 1), pad_reward=True)
    groups = random_groups(rows, 3)
    while len(set(groups)) == len(groups):
        groups = random_groups(rows, 3)
    agents = [rng.choice(["a1", "a2"]) for _ in range(rows)]
    trajs = [f"t{rng.randrange(rows // 2 + 1)}" for _ in range(rows)]
    base = {"tokenRewards": tr, "responseMask": m, "groupIds": groups}
    for est in ["grpo", "rloo", "opo", "gpg", "reinforce_plus_plus_baseline"]:
        outcome(f"{est}: random {k}", est, base, {})
    outcome(f"grpo: random {k}, no std", "grpo", base, {"normalizeByStd": False})
    outcome(f"grpo: random {k}, trajectories", "grpo", {**base, "trajectoryIds": trajs, "agentIds": agents}, {})
    outcome(f"drmas: random {k}", "drmas", {**base, "trajectoryIds": trajs, "agentIds": agents}, {})
    gcount = defaultdict(int)
    for g in groups:
        gcount[g] += 1
    if min(gcount.values()) >= 2:
        outcome(f"grpo_passk: random {k}", "grpo_passk", base, {})
    outcome(f"reinforce_plus_plus: random {k}", "reinforce_plus_plus", base, {"gamma": rng.choice([1.0, 0.95])})
    outcome(f"remax: random {k}", "remax", {**base, "baselineRewards": [round(rng.uniform(-1, 2), 3) for _ in range(rows)]}, {})
    vals = [[round(rng.uniform(-1, 1), 4) for _ in range(cols)] for _ in range(rows)]
    outcome(f"gae: random {k}", "gae", {**base, "values": vals}, {"gamma": 0.99, "lam": 0.95})
    obs = [rng.choice(["s0", "s1", "s2"]) for _ in range(rows)]
    steps = [round(rng.uniform(0, 1), 3) for _ in range(rows)]
    outcome(f"gigpo: random {k}", "gigpo", {**base, "stepRewards": steps, "anchorObservations": obs},
            {"gigpoMode": rng.choice(["mean_norm", "mean_std_norm"]), "stepAdvantageWeight": rng.choice([1.0, 0.7])})

# ---------------------------------------------------------------- loss cases
policy_cases = []


def add_policy(name, inp, options):
    old, logp, adv, mask = T(inp["oldLogProbs"]), T(inp["logProbs"]), T(inp["advantages"]), T(inp["responseMask"])
    w = T(inp["importanceWeights"]) if "importanceWeights" in inp else None
    variant = options.get("variant", "vanilla")
    clip = options.get("clipRatio", 0.2)
    low = options.get("clipRatioLow", clip)
    high = options.get("clipRatioHigh", clip)
    c = options.get("clipRatioC", 3.0)
    agg = options.get("aggregation", "seq-mean-token-mean" if variant == "gspo" else "token-mean")
    loss, cf, cfl, kl = POLICY[variant](old, logp, adv, mask, agg, low, high, c, w)
    policy_cases.append({"name": name, "input": inp, "options": options,
                         "expected": {"loss": loss.item(), "clipFraction": cf.item(), "clipFractionLower": cfl.item(), "approxKl": kl.item()}})


for k in range(8):
    rows, cols = rng.randint(3, 6), rng.randint(3, 7)
    m = random_mask(rows, cols)
    old = [[round(-rng.uniform(0.05, 3), 4) for _ in range(cols)] for _ in range(rows)]
    logp = [[round(o + rng.choice([rng.gauss(0, 0.15), rng.gauss(0, 1.2), 1.5, -1.5]), 4) for o in r] for r in old]
    adv = [[round(rng.gauss(0, 1), 4) for _ in range(cols)] for _ in range(rows)]
    inp = {"logProbs": logp, "oldLogProbs": old, "advantages": adv, "responseMask": m}
    if k % 3 == 0:
        inp["importanceWeights"] = [[round(rng.uniform(0.5, 1.5), 3) for _ in range(cols)] for _ in range(rows)]
    for variant in ["vanilla", "gspo", "cispo", "gpg"]:
        for agg in AGGS:
            opts = {"variant": variant, "aggregation": agg}
            if k % 2 == 1:
                opts.update({"clipRatioLow": 0.2, "clipRatioHigh": 0.28})
            if k == 4:
                opts.update({"clipRatio": 0.1, "clipRatioC": 2.0})
            add_policy(f"{variant} {agg} random {k}", inp, opts)
    add_policy(f"vanilla default options random {k}", inp, {})
    add_policy(f"gspo default aggregation random {k}", inp, {"variant": "gspo"})
# extreme log-ratio (clamped at 20) and dual clip engaged
add_policy("vanilla: clamp at +-20, dual clip", {
    "logProbs": [[0.0, -30.0, -1.0], [-0.1, -2.0, -5.0]], "oldLogProbs": [[-25.0, -1.0, -2.5], [-0.1, -0.5, -5.0]],
    "advantages": [[-1.0, 2.0, -0.5], [1.0, -3.0, 0.0]], "responseMask": [[1, 1, 1], [1, 1, 0]]}, {})

aggregate_cases = []
for k in range(4):
    rows, cols = rng.randint(2, 6), rng.randint(2, 6)
    m = random_mask(rows, cols)
    if k == 2:
        m[0] = [0.0] * cols  # an empty row
    loss = [[round(rng.gauss(0, 2), 4) for _ in range(cols)] for _ in range(rows)]
    for agg in AGGS:
        aggregate_cases.append({"name": f"{agg} random {k}", "loss": loss, "mask": m, "mode": agg, "opts": {},
                                "expected": agg_loss(T(loss), T(m), agg).item()})
    aggregate_cases.append({"name": f"seq-mean-token-sum-norm scale 7 random {k}", "loss": loss, "mask": m,
                            "mode": "seq-mean-token-sum-norm", "opts": {"lossScaleFactor": 7},
                            "expected": agg_loss(T(loss), T(m), "seq-mean-token-sum-norm", 7).item()})

kl_cases = []
lp = [[-0.5, -1.0, -2.0, -0.01], [-3.0, -25.0, 0.0, -0.7]]
rf = [[-0.7, -1.0, -1.2, -30.0], [-2.0, -0.5, -0.3, -0.7]]
for kind in ["k1", "kl", "abs", "k2", "mse", "k3", "low_var_kl"]:
    kl_cases.append({"name": kind, "logProbs": lp, "refLogProbs": rf, "kind": kind, "expected": L(kl_penalty(T(lp), T(rf), kind))})

value_cases = []
for k in range(4):
    rows, cols = rng.randint(2, 5), rng.randint(2, 6)
    m = random_mask(rows, cols)
    old = [[round(rng.gauss(0, 1), 4) for _ in range(cols)] for _ in range(rows)]
    v = [[round(o + rng.gauss(0, 0.5), 4) for o in r] for r in old]
    ret = [[round(rng.gauss(0, 1.5), 4) for _ in range(cols)] for _ in range(rows)]
    for agg in AGGS:
        clip = rng.choice([0.2, 0.5])
        loss, cf = value_loss(T(v), T(ret), T(old), T(m), clip, agg)
        value_cases.append({"name": f"{agg} random {k}", "input": {"values": v, "oldValues": old, "returns": ret, "responseMask": m},
                            "options": {"clipRange": clip, "aggregation": agg}, "expected": {"loss": loss.item(), "clipFraction": cf.item()}})

entropy_cases = []
logits = [[[rng.gauss(0, 3) for _ in range(5)] for _ in range(3)] for _ in range(2)]
logits[0][0] = [1000.0, 999.0, -1000.0, 0.0, 2.0]  # large logits: needs a stable logsumexp
entropy_cases.append({"name": "random with large logits", "logits": logits, "expected": L(entropy_from_logits(T(logits)))})

similarity_cases = []
pairs = [("", ""), ("abc", ""), ("abcd", "bcde"), ("You are in room 1.", "You are in room 2."), ("kitten", "sitting"),
         (long_a, long_b), (long_b, long_a), ("a" * 250, "a" * 240 + "b" * 10), ("héllo wörld ✓", "hello world ✓"),
         ("qabxcd", "abycdf"), (" abcd", "abcd abcd")]
for a, b in pairs:
    similarity_cases.append({"a": a, "b": b, "expected": SequenceMatcher(None, a, b).ratio()})

out = {"advantage": advantage_cases, "policyLoss": policy_cases, "aggregateLoss": aggregate_cases, "klPenalty": kl_cases,
       "valueLoss": value_cases, "entropy": entropy_cases, "similarity": similarity_cases}


def check_finite(x):
    if isinstance(x, float):
        assert math.isfinite(x), x
    elif isinstance(x, list):
        for e in x:
            check_finite(e)
    elif isinstance(x, dict):
        for e in x.values():
            check_finite(e)


check_finite(out)
path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cases.json")
with open(path, "w") as f:
    json.dump(out, f, separators=(",", ":"))
    f.write("\n")
print(f"wrote {path}: " + ", ".join(f"{k} {len(v)}" for k, v in out.items()))
