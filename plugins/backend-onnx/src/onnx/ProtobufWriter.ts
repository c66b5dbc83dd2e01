/**
 * A minimal protocol-buffers encoder: enough of the wire format (varints, length-delimited fields, packed
 * repeated scalars) to write ONNX models. Fields are appended in the order they are written.
 */
export class ProtobufWriter {
  private chunks: Uint8Array[] = [];
  private current = new Uint8Array(256);
  private used = 0;
  private total = 0;

  get length(): number {
    return this.total;
  }

  private reserve(n: number): void {
    if (this.used + n <= this.current.length) return;
    this.flushCurrent();
    this.current = new Uint8Array(Math.max(256, n, this.total >> 2 > 1 << 20 ? 1 << 20 : this.total >> 2));
  }

  private flushCurrent(): void {
    if (this.used > 0) this.chunks.push(this.current.subarray(0, this.used));
    this.current = new Uint8Array(0);
    this.used = 0;
  }

  private byte(b: number): void {
    this.current[this.used++] = b;
    this.total++;
  }

  /** An unsigned varint; negative int64 values are written as their 10-byte two's complement. */
  varint(value: number): this {
    if (!Number.isInteger(value)) throw new RangeError(`varint needs an integer, got ${value}`);
    this.reserve(10);
    if (value < 0) {
      let big = BigInt.asUintN(64, BigInt(value));
      while (big >= 0x80n) {
        this.byte(Number(big & 0x7fn) | 0x80);
        big >>= 7n;
      }
      this.byte(Number(big));
      return this;
    }
    while (value >= 0x80) {
      this.byte((value % 0x80) | 0x80);
      value = Math.floor(value / 0x80);
    }
    this.byte(value);
    return this;
  }

  private tag(field: number, wireType: number): void {
    this.varint(field * 8 + wireType);
  }

  int(field: number, value: number): this {
    this.tag(field, 0);
    return this.varint(value);
  }

  float(field: number, value: number): this {
    this.tag(field, 5);
    this.reserve(4);
    new DataView(this.current.buffer, this.current.byteOffset + this.used, 4).setFloat32(0, value, true);
    this.used += 4;
    this.total += 4;
    return this;
  }

  bytes(field: number, data: Uint8Array): this {
    this.tag(field, 2);
    this.varint(data.length);
    if (data.length > 4096) {
      // Large payloads (weights) are referenced, not copied, until `finish`.
      this.flushCurrent();
      this.chunks.push(data);
      this.total += data.length;
      this.current = new Uint8Array(256);
      return this;
    }
    this.reserve(data.length);
    this.current.set(data, this.used);
    this.used += data.length;
    this.total += data.length;
    return this;
  }

  string(field: number, value: string): this {
    return this.bytes(field, new TextEncoder().encode(value));
  }

  /** A nested message, encoded by `write` into its own writer. */
  message(field: number, write: (w: ProtobufWriter) => void): this {
    const inner = new ProtobufWriter();
    write(inner);
    this.tag(field, 2);
    this.varint(inner.length);
    this.flushCurrent();
    for (const chunk of inner.parts()) {
      this.chunks.push(chunk);
      this.total += chunk.length;
    }
    this.current = new Uint8Array(256);
    return this;
  }

  packedVarints(field: number, values: ArrayLike<number>): this {
    const inner = new ProtobufWriter();
    for (let i = 0; i < values.length; i++) inner.varint(values[i]!);
    return this.bytes(field, inner.finish());
  }

  packedFloats(field: number, values: ArrayLike<number>): this {
    const data = new Float32Array(values.length);
    data.set(Array.from(values));
    return this.bytes(field, new Uint8Array(data.buffer));
  }

  private parts(): Uint8Array[] {
    this.flushCurrent();
    return this.chunks;
  }

  finish(): Uint8Array {
    const parts = this.parts();
    const out = new Uint8Array(this.total);
    let offset = 0;
    for (const p of parts) {
      out.set(p, offset);
      offset += p.length;
    }
    this.current = new Uint8Array(256);
    return out;
  }
}
