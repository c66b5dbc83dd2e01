/** Decoders of tokenizer.json: they turn token strings back into text. */
import { byteLevelTokenBytes } from './byteLevel.js';
import { TokenizerError } from './errors.js';
import { stringField } from './componentFields.js';
import type { ComponentJson } from './tokenizerJson.js';

export interface TokenDecoder {
  decode(tokens: string[]): string;
  /**
   * Present when the decoded text is the UTF-8 decoding of the concatenated bytes of each token, which lets a
   * streaming decoder work token by token (ByteLevel, Fuse, ByteFallback+Fuse).
   */
  tokenBytes?: (token: string) => Uint8Array;
}

const utf8Encoder = new TextEncoder();

export function utf8Decode(bytes: Uint8Array): string {
  // ignoreBOM keeps a leading U+FEFF, which is text like any other here.
  return new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes);
}

function concatBytes(parts: Uint8Array[]): Uint8Array {
  let length = 0;
  for (const p of parts) length += p.length;
  const out = new Uint8Array(length);
  let offset = 0;
  for (const p of parts) {
    out.set(p, offset);
    offset += p.length;
  }
  return out;
}

const BYTE_TOKEN = /^<0x([0-9A-Fa-f]{2})>$/;

function fallbackBytes(token: string): Uint8Array {
  const m = BYTE_TOKEN.exec(token);
  return m ? Uint8Array.of(parseInt(m[1]!, 16)) : utf8Encoder.encode(token);
}

/** A decoder step: token list to token list, as `tokenizers`' decode_chain. */
type Chain = (tokens: string[]) => string[];

function chainOf(component: ComponentJson, file?: string): Chain {
  switch (component.type) {
    case 'ByteLevel':
      return (tokens) => [utf8Decode(concatBytes(tokens.map(byteLevelTokenBytes)))];
    case 'Fuse':
      return (tokens) => [tokens.join('')];
    case 'ByteFallback':
      return (tokens) => {
        const out: string[] = [];
        let pending: number[] = [];
        const flush = () => {
          if (pending.length === 0) return;
          const bytes = Uint8Array.from(pending);
          const text = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true }).decode(bytes);
          // tokenizers emits one U+FFFD per byte of an invalid sequence.
          if (text.includes('\uFFFD')) for (let i = 0; i < pending.length; i++) out.push('\uFFFD');
          else out.push(text);
          pending = [];
        };
        for (const t of tokens) {
          const m = BYTE_TOKEN.exec(t);
          if (m) pending.push(parseInt(m[1]!, 16));
          else {
            flush();
            out.push(t);
          }
        }
        flush();
        return out;
      };
    case 'Replace': {
      const pattern = component.pattern as { String?: string; Regex?: string } | undefined;
      const content = stringField(component, 'content', '', file);
      if (pattern?.String === undefined) throw new TokenizerError('Replace decoder supports only a String pattern', file);
      const from = pattern.String;
      return (tokens) => tokens.map((t) => t.split(from).join(content));
    }
    case 'Strip': {
      const content = stringField(component, 'content', ' ', file);
      const start = Number(component.start ?? 0);
      const stop = Number(component.stop ?? 0);
      return (tokens) =>
        tokens.map((t) => {
          const chars = [...t];
          let a = 0;
          let b = chars.length;
          while (a < start && a < b && chars[a] === content) a++;
          for (let k = 0; k < stop && b > a && chars[b - 1] === content; k++) b--;
          return chars.slice(a, b).join('');
        });
    }
    case 'Metaspace': {
      const replacement = stringField(component, 'replacement', '▁', file);
      const prependScheme = component.prepend_scheme ?? (component.add_prefix_space === false ? 'never' : 'always');
      return (tokens) =>
        tokens.map((t, i) => {
          const text = t.split(replacement).join(' ');
          return i === 0 && prependScheme !== 'never' && text.startsWith(' ') ? text.slice(1) : text;
        });
    }
    case 'Sequence': {
      const steps = ((component.decoders as ComponentJson[] | undefined) ?? []).map((d) => chainOf(d, file));
      return (tokens) => steps.reduce((acc, step) => step(acc), tokens);
    }
    default:
      throw new TokenizerError(`decoder type "${component.type}" is not supported by this tokenizer implementation`, file);
  }
}

function byteDecoding(component: ComponentJson | null | undefined): ((token: string) => Uint8Array) | undefined {
  if (component == null) return undefined;
  if (component.type === 'ByteLevel') return byteLevelTokenBytes;
  if (component.type === 'Fuse') return (t) => utf8Encoder.encode(t);
  if (component.type === 'Sequence') {
    const types = ((component.decoders as ComponentJson[] | undefined) ?? []).map((d) => d.type).join(',');
    if (types === 'ByteLevel') return byteLevelTokenBytes;
    if (types === 'Fuse') return (t) => utf8Encoder.encode(t);
    if (types === 'ByteFallback,Fuse') return fallbackBytes;
  }
  return undefined;
}

export function buildDecoder(component: ComponentJson | null | undefined, file?: string): TokenDecoder {
  // Without a decoder, `tokenizers` joins tokens with spaces.
  if (component == null) return { decode: (tokens) => tokens.join(' ') };
  const chain = chainOf(component, file);
  const tokenBytes = byteDecoding(component);
  return { decode: (tokens) => chain(tokens).join(''), ...(tokenBytes ? { tokenBytes } : {}) };
}
