/** FNV-1a over UTF-16 code units, then murmur3's finalizer so nearby inputs land far apart. Unsigned 32-bit. */
export function hashString(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** Hash of several parts; the separator keeps ("ab", "c") and ("a", "bc") apart. */
export function hashParts(...parts: ReadonlyArray<string | number>): number {
  return hashString(parts.map(String).join('\u0001'));
}

/** A hash mapped to [0, 1). */
export function hashFraction(...parts: ReadonlyArray<string | number>): number {
  return hashParts(...parts) / 4294967296;
}
