"""The math preset's Solver-Verifier loop written on TRL, as a user would have to: TRL 1.16 has no multi-agent
trainer. GRPOTrainer trains one completion per dataset row, and its extension point for anything beyond one
generate call is `rollout_func(prompts, trainer)` (experimental), which must return one prompt and one completion per
row. So each episode becomes one sequence:

    Solver prompt | Solver turn | Verifier framing | Verifier turn | Solver framing | Solver turn

with the framing (the next turn's chat-template header and prompt) masked out of the loss by `env_mask`, the
mechanism TRL uses for tool results. Where TRL forced workarounds against drmas's preset:

- WORKAROUND 1 (context): in drmas each turn is a row of its own with its own prompt ("Check: {question}\\n{the
  Solver's output}" for the Verifier); here each turn is conditioned on the whole transcript before it, because the
  training forward pass sees one sequence and must see what the sampler saw.
- WORKAROUND 2 (credit): drmas rewards every turn (the episode's outcome, minus the invalid penalty of that turn) and
  normalizes advantages per agent (`algorithm.advantage: drmas`); TRL takes one reward per row, normalized per prompt
  group: here the outcome minus the invalid penalty averaged over the episode's turns, one advantage for all of them.
- WORKAROUND 3 (generation): the loop's generate calls are written here (left padding, a stop string for
  `</verify>`, per-row turn counts), with none of the trainer's generation settings applied for us.

    trl_solver_verifier.py --tasks TASKS.jsonl --model DIR --settings SETTINGS.json --steps N [--seed S]
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402
import math_reward  # noqa: E402
import trl_run  # noqa: E402

VERDICT = re.compile(r"<verify>\s*(approve|reject)\s*</verify>", re.IGNORECASE)


def user_turn(tokenizer, content):
    """A chat turn's header and prompt, as the chat template renders it after an assistant turn."""
    return "\n" + tokenizer.apply_chat_template([{"role": "user", "content": content}], tokenize=False, add_generation_prompt=True)


def generate(model, tokenizer, contexts, sampling, stop=None):
    """Samples one turn for each context (token id lists), left-padded into one batch; returns the new ids."""
    pad = tokenizer.pad_token_id
    width = max(len(c) for c in contexts)
    ids = torch.tensor([[pad] * (width - len(c)) + c for c in contexts])
    mask = torch.tensor([[0] * (width - len(c)) + [1] * len(c) for c in contexts])
    with torch.no_grad():
        out = model.generate(
            input_ids=ids, attention_mask=mask, do_sample=True, temperature=sampling["temperature"], top_p=sampling["topP"],
            top_k=0, max_new_tokens=sampling["maxNewTokens"], pad_token_id=pad, eos_token_id=tokenizer.eos_token_id,
            **({"stop_strings": stop, "tokenizer": tokenizer} if stop else {}),
        )
    turns = []
    for row in out[:, width:].tolist():
        if tokenizer.eos_token_id in row:
            row = row[: row.index(tokenizer.eos_token_id) + 1]
        while row and row[-1] == pad:
            row.pop()
        turns.append(row)
    return turns


def make_rollout(settings, questions):
    solver = {k: settings[k] for k in ("temperature", "topP", "maxNewTokens")}
    verifier = settings["verifier"]
    max_loops = settings["maxLoops"]

    def rollout_func(prompts, trainer):
        model, tokenizer = trainer.model, trainer.processing_class
        rows = len(prompts)
        prompt_ids = [tokenizer(p, add_special_tokens=False)["input_ids"] for p in prompts]
        completion = [[] for _ in range(rows)]
        env_mask = [[] for _ in range(rows)]
        solutions = [""] * rows
        valid = [[] for _ in range(rows)]
        active = list(range(rows))

        def add(row, ids, trained):
            completion[row].extend(ids)
            env_mask[row].extend([1 if trained else 0] * len(ids))

        for loop in range(max_loops):
            turns = generate(model, tokenizer, [prompt_ids[r] + completion[r] for r in active], solver)
            for r, ids in zip(active, turns):
                add(r, ids, True)
                solutions[r] = tokenizer.decode(ids, skip_special_tokens=True)
                valid[r].append(math_reward.solver_turn_valid(solutions[r]) is True)
            if loop == max_loops - 1:
                break
            for r in active:
                framing = user_turn(tokenizer, f"Check: {questions[prompts[r]]}\nThe output of \"solver\": {solutions[r]}")
                add(r, tokenizer(framing, add_special_tokens=False)["input_ids"], False)
            turns = generate(model, tokenizer, [prompt_ids[r] + completion[r] for r in active], verifier, verifier["stop"])
            rejected = []
            for r, ids in zip(active, turns):
                add(r, ids, True)
                verdict = VERDICT.search(tokenizer.decode(ids, skip_special_tokens=True))
                valid[r].append(verdict is not None)
                if verdict is None or verdict.group(1).lower() == "reject":
                    rejected.append(r)
            for r in rejected:
                add(r, tokenizer("<|im_end|>" + user_turn(tokenizer, f"Solve: {questions[prompts[r]]}"), add_special_tokens=False)["input_ids"], False)
            active = rejected
            if not active:
                break
        return {"prompt_ids": prompt_ids, "completion_ids": completion, "logprobs": None, "env_mask": env_mask,
                "final_solution": solutions, "turn_valid": valid}

    return rollout_func


def build(args, settings, output_dir):
    from trl import GRPOTrainer

    tasks = trl_run.load_tasks(args.tasks, args.steps)
    questions = {t["prompt"]: t["question"] for t in tasks}
    dataset = trl_run.dataset_of(tasks)
    model, tokenizer = trl_run.load_model(args.model, tasks)
    clock = {}

    def episode_reward(completions, answer, split, final_solution, turn_valid, **kwargs):
        outcomes = [math_reward.outcome(s, a, sp, settings["checkSteps"]) for s, a, sp in zip(final_solution, answer, split)]
        rewards = [o - settings["invalidPenalty"] * (1 - sum(v) / len(v)) for o, v in zip(outcomes, turn_valid)]
        clock["clock"].record_rewards(rewards, outcomes)
        return rewards

    longest = settings["maxLoops"] * (settings["maxNewTokens"] + settings["verifier"]["maxNewTokens"] + 128)
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    trainer = GRPOTrainer(
        model=model,
        reward_funcs=episode_reward,
        args=trl_run.grpo_config(settings, args, output_dir, max_completion_length=longest),
        train_dataset=dataset,
        processing_class=tokenizer,
        optimizers=(trl_run.optimizer_for(model, settings), None),
        rollout_func=make_rollout(settings, questions),
    )
    return trainer, lambda c: clock.__setitem__("clock", c)


if __name__ == "__main__":
    arguments = trl_run.parse_args()
    trl_run.run(arguments, build, {"framework": "trl", "job": "solver-verifier"})
