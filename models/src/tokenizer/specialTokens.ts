/** Special tokens of the tokenizers built for drmas' own tiny models (ChatML, as Qwen). */
export const END_OF_TEXT = '<|endoftext|>';
export const IM_START = '<|im_start|>';
export const IM_END = '<|im_end|>';
export const PAD = '<pad>';
export const DEFAULT_SPECIAL_TOKENS: readonly string[] = [END_OF_TEXT, IM_START, IM_END, PAD];

/** Name of the n-th filler token used to bring a vocabulary to an exact size. */
export function reservedTokenName(n: number): string {
  return `<|reserved_${n}|>`;
}
