/**
 * A protobuf wire-format reader and a TFRecord reader written for the tests, independent of protobufjs: they read
 * the event files by TensorFlow's field numbers (event.proto, summary.proto) and check every record's CRCs with a
 * bit-by-bit CRC-32C, not the table-driven one the writer uses.
 */

/** CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), one bit at a time. */
export function crc32cBitwise(bytes: Uint8Array): number {
  let crc = 0xffffffff;
  for (const byte of bytes) {
    crc ^= byte;
    for (let k = 0; k < 8; k++) crc = crc & 1 ? (crc >>> 1) ^ 0x82f63b78 : crc >>> 1;
  }
  return (crc ^ 0xffffffff) >>> 0;
}

function masked(crc: number): number {
  const rotated = ((crc >>> 15) | (crc << 17)) >>> 0;
  return (rotated + 0xa282ead8) >>> 0;
}

/** The records of a TFRecord file; throws on a bad length or data CRC. */
export function readTfRecords(file: Buffer): Buffer[] {
  const records: Buffer[] = [];
  let at = 0;
  while (at < file.length) {
    const lengthBytes = file.subarray(at, at + 8);
    const length = Number(lengthBytes.readBigUInt64LE(0));
    if (file.readUInt32LE(at + 8) !== masked(crc32cBitwise(lengthBytes))) throw new Error(`bad length CRC at byte ${at}`);
    const data = file.subarray(at + 12, at + 12 + length);
    if (file.readUInt32LE(at + 12 + length) !== masked(crc32cBitwise(data))) throw new Error(`bad data CRC at byte ${at}`);
    records.push(data);
    at += 16 + length;
  }
  return records;
}

export type WireValue = bigint | Buffer | number;
/** Field number -> the values read for it, in order (wire type 0 as bigint, 1 as float64, 2 as bytes, 5 as float32). */
export type WireMessage = Map<number, WireValue[]>;

export function readMessage(bytes: Buffer): WireMessage {
  const fields: WireMessage = new Map();
  let at = 0;
  const varint = (): bigint => {
    let value = 0n;
    let shift = 0n;
    for (;;) {
      const byte = bytes[at++]!;
      value |= BigInt(byte & 0x7f) << shift;
      if (!(byte & 0x80)) return value;
      shift += 7n;
    }
  };
  while (at < bytes.length) {
    const key = Number(varint());
    const field = key >>> 3;
    let value: WireValue;
    switch (key & 7) {
      case 0:
        value = varint();
        break;
      case 1:
        value = bytes.readDoubleLE(at);
        at += 8;
        break;
      case 2: {
        const length = Number(varint());
        value = bytes.subarray(at, at + length);
        at += length;
        break;
      }
      case 5:
        value = bytes.readFloatLE(at);
        at += 4;
        break;
      default:
        throw new Error(`wire type ${key & 7} at byte ${at}`);
    }
    fields.set(field, [...(fields.get(field) ?? []), value]);
  }
  return fields;
}

/** A packed repeated double field. */
export function packedDoubles(bytes: Buffer | undefined): number[] {
  if (!bytes) return [];
  return Array.from({ length: bytes.length / 8 }, (_, i) => bytes.readDoubleLE(i * 8));
}

export function one<T extends WireValue>(message: WireMessage, field: number): T | undefined {
  return message.get(field)?.[0] as T | undefined;
}

export interface DecodedEvent {
  wallTime: number;
  step: number;
  fileVersion?: string;
  sessionStatus?: number;
  scalars: Map<string, number>;
  histograms: Map<string, { min: number; max: number; num: number; sum: number; limits: number[]; counts: number[] }>;
  texts: Map<string, { pluginName: string; text: string }>;
}

/** An `Event` by TensorFlow's field numbers: wall_time 1, step 2, file_version 3, summary 5, session_log 7. */
export function decodeEvent(bytes: Buffer): DecodedEvent {
  const event = readMessage(bytes);
  const decoded: DecodedEvent = {
    wallTime: one<number>(event, 1) ?? 0,
    step: Number(one<bigint>(event, 2) ?? 0n),
    scalars: new Map(),
    histograms: new Map(),
    texts: new Map(),
  };
  const version = one<Buffer>(event, 3);
  if (version) decoded.fileVersion = version.toString('utf8');
  const session = one<Buffer>(event, 7);
  if (session) decoded.sessionStatus = Number(one<bigint>(readMessage(session), 1) ?? 0n);
  const summary = one<Buffer>(event, 5);
  for (const raw of summary ? (readMessage(summary).get(1) ?? []) : []) {
    // Summary.Value: tag 1, simple_value 2, histo 5, tensor 8, metadata 9.
    const value = readMessage(raw as Buffer);
    const tag = one<Buffer>(value, 1)!.toString('utf8');
    const simple = one<number>(value, 2);
    if (simple !== undefined) decoded.scalars.set(tag, simple);
    const histo = one<Buffer>(value, 5);
    if (histo) {
      // HistogramProto: min 1, max 2, num 3, sum 4, sum_squares 5, bucket_limit 6, bucket 7 (packed doubles).
      const h = readMessage(histo);
      decoded.histograms.set(tag, {
        min: one<number>(h, 1) ?? 0,
        max: one<number>(h, 2) ?? 0,
        num: one<number>(h, 3) ?? 0,
        sum: one<number>(h, 4) ?? 0,
        limits: packedDoubles(one<Buffer>(h, 6)),
        counts: packedDoubles(one<Buffer>(h, 7)),
      });
    }
    const tensor = one<Buffer>(value, 8);
    if (tensor) {
      // TensorProto: dtype 1 (DT_STRING = 7), string_val 8; SummaryMetadata.plugin_data 1 -> plugin_name 1.
      const t = readMessage(tensor);
      if (Number(one<bigint>(t, 1)) !== 7) throw new Error(`text ${tag}: dtype ${one<bigint>(t, 1)}, not DT_STRING`);
      const metadata = readMessage(one<Buffer>(value, 9)!);
      const pluginName = one<Buffer>(readMessage(one<Buffer>(metadata, 1)!), 1)!.toString('utf8');
      decoded.texts.set(tag, { pluginName, text: one<Buffer>(t, 8)!.toString('utf8') });
    }
  }
  return decoded;
}

/**
 * TensorBoard keys a time series by its tag alone, in both its readers: a tag written as two kinds (a scalar at one
 * event, a histogram at another) leaves the Rust data server with neither and the Python one with a broken series.
 * Throws naming every such tag of a file's events.
 */
export function assertOneKindPerTag(events: DecodedEvent[]): void {
  const kinds = new Map<string, Set<string>>();
  for (const event of events) {
    for (const [kind, values] of [
      ['scalar', event.scalars],
      ['histogram', event.histograms],
      ['text', event.texts],
    ] as const) {
      for (const tag of values.keys()) (kinds.get(tag) ?? kinds.set(tag, new Set()).get(tag)!).add(kind);
    }
  }
  const mixed = [...kinds].filter(([, set]) => set.size > 1).map(([tag, set]) => `${tag} (${[...set].join(' and ')})`);
  if (mixed.length) throw new Error(`tags written as more than one kind, which TensorBoard cannot show: ${mixed.join(', ')}`);
}
