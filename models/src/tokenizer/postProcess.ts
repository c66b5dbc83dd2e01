/** Post-processors of tokenizer.json, for a single sequence: they add special tokens such as BOS around the ids. */
import { TokenizerError } from './errors.js';
import type { ComponentJson } from './tokenizerJson.js';

export type PostProcessor = (ids: number[]) => number[];

interface TemplatePiece {
  SpecialToken?: { id: string };
  Sequence?: { id: string };
}

/** Returns undefined for post-processors that do not change ids (ByteLevel only trims offsets). */
export function buildPostProcessor(component: ComponentJson | null | undefined, file?: string): PostProcessor | undefined {
  if (component == null) return undefined;
  switch (component.type) {
    case 'ByteLevel':
      return undefined;
    case 'TemplateProcessing': {
      const specials = (component.special_tokens ?? {}) as Record<string, { ids?: number[] }>;
      const single = (component.single ?? []) as TemplatePiece[];
      const parts = single.map((piece): number[] | 'sequence' => {
        if (piece.Sequence) return 'sequence';
        const name = piece.SpecialToken?.id;
        const ids = name === undefined ? undefined : specials[name]?.ids;
        if (ids === undefined) throw new TokenizerError(`TemplateProcessing names special token ${JSON.stringify(name)} with no ids`, file);
        return ids;
      });
      return (ids) => parts.flatMap((p) => (p === 'sequence' ? ids : p));
    }
    case 'RobertaProcessing':
    case 'BertProcessing': {
      const cls = component.cls as [string, number] | undefined;
      const sep = component.sep as [string, number] | undefined;
      if (!cls || !sep) throw new TokenizerError(`${component.type} lacks cls or sep`, file);
      return (ids) => [cls[1], ...ids, sep[1]];
    }
    case 'Sequence': {
      const steps = ((component.processors as ComponentJson[] | undefined) ?? []).map((p) => buildPostProcessor(p, file));
      return (ids) => steps.reduce((acc, step) => (step ? step(acc) : acc), ids);
    }
    default:
      throw new TokenizerError(`post_processor type "${component.type}" is not supported by this tokenizer implementation`, file);
  }
}
