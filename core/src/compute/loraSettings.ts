/** The decoder projections a LoRA adapter can target, by their Hugging Face / PEFT module names. */
export const LORA_TARGET_MODULES = ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'] as const;
export type LoraTargetModule = (typeof LORA_TARGET_MODULES)[number];

export function isLoraTargetModule(name: string): name is LoraTargetModule {
  return (LORA_TARGET_MODULES as readonly string[]).includes(name);
}

/** `agents.<role>.lora` resolved: PEFT's `LoraConfig` fields `r`, `lora_alpha`, `lora_dropout`, `target_modules`. */
export interface LoraSettings {
  rank: number;
  alpha: number;
  dropout: number;
  targetModules: readonly LoraTargetModule[];
}

/** What a `BackendFactory` finds in `settings.lora` when it makes a LoRA agent's engine: the settings and the agent. */
export interface LoraEngineSettings extends LoraSettings {
  agent: string;
  /** Seeds the adapter's init and its dropout masks: the run's seed and the agent's place under `agents`. */
  seed: number;
}
