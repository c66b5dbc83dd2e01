"""The peer benchmark's single-agent GRPO job on TRL: the Solver alone on drmas's exported math tasks, rewarded by
bench/peers/math_reward.py (drmas's answer check, steps check and invalid-turn penalty), with the GRPOConfig that
drmas's settings map to (bench/peers/trl_run.py). This is the script a TRL user writes for the job; the only parts
beyond GRPOTrainer's documented use are the optimizer with two learning rates and the measurement.

    trl_grpo.py --tasks TASKS.jsonl --model DIR --settings SETTINGS.json --steps N [--seed S] [--threads T]
                [--precision fp32|bf16]
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import math_reward  # noqa: E402
import trl_run  # noqa: E402


def build(args, settings, output_dir):
    from trl import GRPOTrainer

    tasks = trl_run.load_tasks(args.tasks, args.steps)
    # The prompts are drmas's, already rendered with the chat template: TRL tokenizes a plain-text prompt as it is.
    dataset = trl_run.dataset_of(tasks)
    model, tokenizer = trl_run.load_model(args.model, tasks)
    reward = math_reward.make_reward_func(settings["checkSteps"], settings["invalidPenalty"])
    clock = {}

    def math_reward_func(completions, answer, split=None, **kwargs):
        rewards = reward(completions, answer, split, **kwargs)
        outcomes = [math_reward.outcome(c, a, s, settings["checkSteps"]) for c, a, s in zip(completions, answer, split)]
        clock["clock"].record_rewards(rewards, outcomes)
        return rewards

    trainer = GRPOTrainer(
        model=model,
        reward_funcs=math_reward_func,
        args=trl_run.grpo_config(settings, args, output_dir),
        train_dataset=dataset,
        processing_class=tokenizer,
        optimizers=(trl_run.optimizer_for(model, settings), None),
    )
    return trainer, lambda c: clock.__setitem__("clock", c)


if __name__ == "__main__":
    arguments = trl_run.parse_args()
    trl_run.run(arguments, build, {"framework": "trl", "job": "grpo"})
