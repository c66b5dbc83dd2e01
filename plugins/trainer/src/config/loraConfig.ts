import { didYouMean, isLoraTargetModule, LORA_TARGET_MODULES, z, type LoraTargetModule } from '@drmas/core';

/** A rank beyond any projection's width here (a typo such as `rank: 8e6` is refused at validation). */
const MAX_RANK = 65_536;

/**
 * `agents.<role>.lora`: the agent trains a LoRA adapter of its own on its model, a frozen base shared with the other
 * agents on it (PEFT's `LoraConfig`: `r`, `lora_alpha`, `lora_dropout`, `target_modules`; PEFT's defaults, with
 * q_proj and v_proj as its default targets for Llama and Qwen).
 */
export const loraSection = z.strictObject({
  rank: z.number().int().min(1).max(MAX_RANK).default(8),
  alpha: z.number().positive().default(8),
  dropout: z.number().min(0).lt(1).default(0),
  targetModules: z
    .array(z.string())
    .min(1)
    .default(['q_proj', 'v_proj'])
    .superRefine((modules, ctx) => {
      modules.forEach((name, i) => {
        if (isLoraTargetModule(name)) return;
        ctx.addIssue({
          code: 'custom',
          path: [i],
          message: `unknown module "${name}"; the modules are ${LORA_TARGET_MODULES.join(', ')}.${didYouMean(name, LORA_TARGET_MODULES)}`,
        });
      });
    })
    .transform((modules) => [...new Set(modules)] as LoraTargetModule[]),
  /**
   * A saved adapter to start from instead of PEFT's init (B = 0): a LoRA run's `checkpoints/step-NNNNNN/<model>@<role>`
   * folder or PEFT's `save_pretrained` output, with these settings; the optimizer starts afresh.
   */
  adapter: z.string().min(1).optional(),
});

export type LoraSection = z.output<typeof loraSection>;
