"""What both TRL runs of the peer benchmark share: the GRPOConfig drmas's settings map to, the model and its optimizer
(the math preset's two learning rates), the dataset of exported tasks in drmas's order, and the measurement (each
optimizer step's wall time split into generation, reward, scoring and update, tokens, reward, peak memory), printed
as one JSON line per step and one for the run.

The settings come from bench/peers.mjs as JSON (`--settings`): drmas's resolved config read by drmas, so a changed
drmas default changes both sides. The table of which drmas key sets which GRPOConfig field is in bench/README.md.
"""
import argparse
import json
import os
import resource
import sys
import tempfile
import time

import torch


def parse_args(extra=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", required=True, help="tasks.jsonl from bench/peers/exportTasks.mjs")
    parser.add_argument("--model", required=True, help="the model folder (Hugging Face layout)")
    parser.add_argument("--settings", required=True, help="JSON: drmas's settings (bench/peers.mjs)")
    parser.add_argument("--steps", type=int, required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)))
    parser.add_argument("--precision", choices=["fp32", "bf16"], default="fp32",
                        help="fp32, or bf16: float32 weights under bf16 autocast (GRPOConfig bf16=True)")
    parser.add_argument("--gradient-checkpointing", choices=["on", "off"], default="on",
                        help="on (GRPOConfig's default: each layer's activations recomputed in the backward) or off")
    parser.add_argument("--vllm", action="store_true",
                        help="generate with vLLM in the training process (use_vllm, vllm_mode colocate); on a CPU the "
                        "first weight sync fails (bench/README.md)")
    if extra:
        extra(parser)
    return parser.parse_args()


def load_tasks(path, steps):
    with open(path, encoding="utf-8") as lines:
        tasks = [json.loads(line) for line in lines if line.strip()]
    tasks = [t for t in tasks if t["step"] <= steps]
    if not tasks or max(t["step"] for t in tasks) < steps:
        sys.exit(f"bench/peers: {path} holds fewer than {steps} steps of tasks: export more (--steps)")
    return sorted(tasks, key=lambda t: (t["step"], t["index"]))


def dataset_of(tasks):
    """The tasks as a `datasets.Dataset` of prompt, answer and split, fingerprinted by the task ids (datasets would
    hash the Arrow table with dill, which fails where vLLM's environment pins another pyarrow build)."""
    import hashlib

    from datasets import Dataset
    from datasets.table import InMemoryTable

    rows = [{"prompt": t["prompt"], "answer": t["answer"], "split": t["split"]} for t in tasks]
    fingerprint = hashlib.sha256(json.dumps([t["taskId"] for t in tasks]).encode()).hexdigest()[:16]
    return Dataset(InMemoryTable.from_pylist(rows), fingerprint=fingerprint)


def grpo_config(settings, args, output_dir, **overrides):
    """The GRPOConfig of drmas's settings (see bench/README.md for the mapping)."""
    from trl import GRPOConfig

    group = settings["samplesPerPrompt"]
    rows = settings["promptsPerStep"] * group
    micro = settings["microBatchSize"]
    if rows % micro:
        sys.exit(f"bench/peers: {rows} rows per step do not split into micro-batches of {micro}")
    fields = dict(
        output_dir=output_dir,
        # One optimizer step per rollout batch: promptsPerStep x samplesPerPrompt rows, micro-batches accumulated.
        per_device_train_batch_size=micro,
        gradient_accumulation_steps=rows // micro,
        num_generations=group,
        num_iterations=settings["epochs"],
        max_completion_length=settings["maxNewTokens"],
        temperature=settings["temperature"],
        top_p=settings["topP"],
        top_k=0,
        learning_rate=settings["lr"],
        weight_decay=settings["weightDecay"],
        adam_beta1=settings["betas"][0],
        adam_beta2=settings["betas"][1],
        adam_epsilon=settings["eps"],
        max_grad_norm=settings["maxGradNorm"],
        lr_scheduler_type="constant",
        warmup_steps=0,
        beta=settings["klCoef"],
        epsilon=settings["clipRatio"],
        loss_type=settings["trlLossType"],
        scale_rewards="group" if settings["normalizeByStd"] else "none",
        # drmas draws each step's tasks in order from its cursor: so does TRL here, from the exported list.
        shuffle_dataset=False,
        max_steps=args.steps,
        seed=args.seed,
        bf16=args.precision == "bf16",
        gradient_checkpointing=args.gradient_checkpointing == "on",
        use_cpu=True,
        logging_steps=1,
        save_strategy="no",
        report_to="none",
        disable_tqdm=True,
        dataloader_num_workers=0,
    )
    if args.vllm:
        fields.update(use_vllm=True, vllm_mode="colocate", vllm_max_model_length=1024)
    fields.update(overrides)
    return GRPOConfig(**fields)


def load_model(path, tasks):
    """The model in float32 (the math base is stored in bf16; drmas computes in float32 too) and its tokenizer,
    checked to give each task's prompt as many tokens as drmas's tokenizer did.

    WORKAROUND: transformers 5's AutoTokenizer builds the tokenizer class of the config's `model_type` (Qwen2Tokenizer
    for these Qwen2-shaped models), which replaces tokenizer.json's byte-level pre-tokenizer with Qwen2's own (digits
    one by one, NFC): " 47" becomes " ", "4", "7" where the file's BPE, and drmas, read one token. The file's own
    pipeline is what PreTrainedTokenizerFast loads."""
    from transformers import AutoModelForCausalLM, PreTrainedTokenizerFast

    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32)
    tokenizer = PreTrainedTokenizerFast.from_pretrained(path)
    for task in tasks:
        count = len(tokenizer(task["prompt"], add_special_tokens=False)["input_ids"])
        if count != task["promptTokens"]:
            sys.exit(f"bench/peers: {path}'s tokenizer gives task {task['taskId']}'s prompt {count} tokens, drmas "
                     f"{task['promptTokens']}: the two sides would not train on the same prompts")
    return model, tokenizer


def optimizer_for(model, settings):
    """AdamW with the settings' parameter groups (the math preset trains model.norm.weight at its own rate).
    GRPOConfig has one learning rate for every parameter: a user needing two builds the optimizer and passes it."""
    import fnmatch

    groups = {i: [] for i in range(len(settings["paramGroups"]))}
    rest = []
    for name, parameter in model.named_parameters():
        for i, group in enumerate(settings["paramGroups"]):
            if any(fnmatch.fnmatchcase(name, pattern) for pattern in group["params"]):
                groups[i].append(parameter)
                break
        else:
            rest.append(parameter)
    param_groups = [{"params": rest}]
    for i, group in enumerate(settings["paramGroups"]):
        if groups[i]:
            param_groups.append({"params": groups[i], **({"lr": group["lr"]} if "lr" in group else {})})
    return torch.optim.AdamW(param_groups, lr=settings["lr"], betas=tuple(settings["betas"]), eps=settings["eps"],
                             weight_decay=settings["weightDecay"])


class StepClock:
    """Times each optimizer step of a GRPOTrainer: wall time between step ends, and inside it the trainer's own
    phases, by wrapping its methods (nothing in what they compute changes)."""

    def __init__(self, trainer, label, emit):
        from transformers import TrainerCallback

        self.trainer = trainer
        self.label = label
        self.emit = emit
        self.phase = {}
        self.tokens = {"generated": 0, "completion": 0, "prompt": 0}
        self.rewards = []
        self.outcomes = []
        self.last = None
        self.step = 0
        self._wrap("_generate", "generation", self._count_tokens)
        self._wrap("_calculate_rewards", "reward")
        self._wrap("_generate_and_score_completions", "rollout_total")
        clock = self

        class Callback(TrainerCallback):
            def on_train_begin(self, args, state, control, **kwargs):
                clock.last = time.perf_counter()

            def on_step_end(self, args, state, control, **kwargs):
                clock.end_step()

        trainer.add_callback(Callback())

    def _wrap(self, name, phase, after=None):
        original = getattr(self.trainer, name)

        def timed(*args, **kwargs):
            start = time.perf_counter()
            result = original(*args, **kwargs)
            self.phase[phase] = self.phase.get(phase, 0.0) + time.perf_counter() - start
            if after:
                after(result)
            return result

        setattr(self.trainer, name, timed)

    def _count_tokens(self, result):
        prompt_ids, completion_ids, model_mask = result[0], result[1], result[2]
        completion = sum(len(ids) for ids in completion_ids)
        self.tokens["prompt"] += sum(len(ids) for ids in prompt_ids)
        self.tokens["completion"] += completion
        # A rollout_func's env_mask marks the tokens the model sampled (framing between turns is not generated).
        self.tokens["generated"] += sum(sum(m) for m in model_mask) if model_mask is not None else completion

    def record_rewards(self, rewards, outcomes):
        self.rewards.extend(rewards)
        self.outcomes.extend(outcomes)

    def end_step(self):
        now = time.perf_counter()
        seconds = now - self.last
        self.last = now
        self.step += 1
        generation = self.phase.get("generation", 0.0)
        reward = self.phase.get("reward", 0.0)
        rollout_total = self.phase.get("rollout_total", 0.0)
        record = {
            **self.label,
            "step": self.step,
            "seconds": seconds,
            "generation": generation,
            "reward": reward,
            # Padding, advantages and (when needed) old log-probs: what rollout scoring costs besides sampling.
            "scoring": max(0.0, rollout_total - generation - reward),
            # The micro-batches' forward and backward passes, clipping and the optimizer step.
            "update": max(0.0, seconds - rollout_total),
            "generatedTokens": self.tokens["generated"],
            "trainedTokens": self.tokens["completion"] + self.tokens["prompt"],
            "rewardMean": sum(self.rewards) / len(self.rewards) if self.rewards else None,
            "outcomeMean": sum(self.outcomes) / len(self.outcomes) if self.outcomes else None,
        }
        self.emit(record)
        self.phase = {}
        self.tokens = {"generated": 0, "completion": 0, "prompt": 0}
        self.rewards, self.outcomes = [], []


def emitter():
    def emit(record):
        print(json.dumps(record), flush=True)

    return emit


def peak_rss_mib():
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def run(args, build_trainer, label):
    """Builds the trainer (`build_trainer(args, settings, output_dir)` returns it and a hook for the clock), trains,
    and prints the step records and the run's summary."""
    started = time.perf_counter()
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    with open(args.settings, encoding="utf-8") as f:
        settings = json.load(f)
    emit = emitter()
    with tempfile.TemporaryDirectory(prefix="drmas-bench-trl-") as output_dir:
        trainer, attach = build_trainer(args, settings, output_dir)
        clock = StepClock(trainer, label, emit)
        attach(clock)
        ready = time.perf_counter()
        trainer.train()
        trained = time.perf_counter()
    emit({
        **label,
        "summary": True,
        "steps": clock.step,
        "trainSeconds": trained - ready,
        "setupSeconds": ready - started,
        "peakRssMiB": peak_rss_mib(),
        "runtime": f"TRL {__import__('trl').__version__}, transformers {__import__('transformers').__version__}, "
                   f"torch {torch.__version__} ({args.threads} threads, {args.precision}, gradient checkpointing "
                   f"{args.gradient_checkpointing})",
    })
