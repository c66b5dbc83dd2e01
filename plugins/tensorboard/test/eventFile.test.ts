import { afterAll, describe, expect, test } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { EventFileWriter, histogramValue, maskedCrc32c, scalarValue, tfRecord, textValue } from '../src/index.js';
import { TempProject } from '../../../test/support/tempProject.js';
import { crc32cBitwise, decodeEvent, readTfRecords } from './wireDecoder.js';

const scratch = new TempProject('tensorboard-events');
afterAll(() => scratch.dispose());

describe('TFRecord framing', () => {
  test('the test oracle gives CRC-32C check value 0xE3069283 for "123456789"', () => {
    expect(crc32cBitwise(Buffer.from('123456789'))).toBe(0xe3069283);
  });

  test('the masked CRC of nothing is the mask delta (CRC 0 rotated is 0)', () => {
    expect(maskedCrc32c(new Uint8Array(0))).toBe(0xa282ead8);
  });

  test("the masked CRC equals the bitwise oracle's, masked by hand, for bytes of many lengths", () => {
    for (const length of [1, 3, 8, 15, 64, 1000]) {
      const bytes = Uint8Array.from({ length }, (_, i) => (i * 37 + length) & 0xff);
      const crc = crc32cBitwise(bytes);
      const rotated = ((crc >>> 15) | (crc << 17)) >>> 0;
      expect(maskedCrc32c(bytes)).toBe((rotated + 0xa282ead8) >>> 0);
    }
  });

  test('a record is length, its CRC, the data and its CRC, and reads back', () => {
    const data = Buffer.from('hello, tensorboard');
    const record = tfRecord(data);
    expect(record.length).toBe(16 + data.length);
    expect(record.readBigUInt64LE(0)).toBe(BigInt(data.length));
    expect(readTfRecords(record)).toEqual([data]);
  });
});

describe('histograms', () => {
  test('0..4 in two buckets: (-inf, 2] holds 0, 1, 2 and (2, 4] holds 3, 4', () => {
    const { histo } = histogramValue('h', [0, 1, 2, 3, 4], 2)!;
    expect(histo).toEqual({ min: 0, max: 4, num: 5, sum: 10, sumSquares: 30, bucketLimit: [2, 4], bucket: [3, 2] });
  });

  test('equal values make one bucket; non-finite values are left out; nothing finite gives no histogram', () => {
    expect(histogramValue('h', [5, 5, NaN, 5, Infinity])!.histo).toEqual({
      min: 5,
      max: 5,
      num: 3,
      sum: 15,
      sumSquares: 75,
      bucketLimit: [5],
      bucket: [3],
    });
    expect(histogramValue('h', [NaN])).toBeUndefined();
    expect(histogramValue('h', [])).toBeUndefined();
  });

  test('every value lands in the bucket whose range holds it', () => {
    const values = Array.from({ length: 200 }, (_, i) => Math.sin(i) * 3 + (i % 7) / 10);
    const { histo } = histogramValue('h', values, 7)!;
    const limits = histo!.bucketLimit;
    const expected = limits.map((limit, b) => values.filter((v) => v <= limit && (b === 0 || v > limits[b - 1]!)).length);
    expect(histo!.bucket).toEqual(expected);
    expect(expected.reduce((a, c) => a + c, 0)).toBe(200);
  });
});

describe('EventFileWriter', () => {
  test('writes the file version, then summaries and session starts that decode by TensorFlow field numbers', () => {
    const dir = scratch.path('writer');
    const writer = new EventFileWriter(dir);
    writer.sessionStart(3);
    writer.summary(3, [scalarValue('loss', 0.1), scalarValue('outcome/mean', 2.5)]);
    writer.summary(3, [histogramValue('adv', [-1, 0, 1], 2)!, textValue('rollouts', '**solver**: `42`')]);
    writer.summary(4, []);
    writer.close();

    const files = readdirSync(dir);
    expect(files).toHaveLength(1);
    expect(files[0]).toMatch(/^events\.out\.tfevents\.\d{10}\..+\.\d+\.[0-9a-f]{8}$/);
    const events = readTfRecords(readFileSync(path.join(dir, files[0]!))).map(decodeEvent);
    expect(events).toHaveLength(4);
    expect(events[0]!.fileVersion).toBe('brain.Event:2');
    expect(events[1]).toMatchObject({ step: 3, sessionStatus: 1 });
    expect(events[2]!.step).toBe(3);
    expect(Object.fromEntries(events[2]!.scalars)).toEqual({ loss: Math.fround(0.1), 'outcome/mean': 2.5 });
    expect(events[3]!.histograms.get('adv')).toEqual({ min: -1, max: 1, num: 3, sum: 0, limits: [0, 1], counts: [2, 1] });
    expect(events[3]!.texts.get('rollouts')).toEqual({ pluginName: 'text', text: '**solver**: `42`' });
    for (const event of events) expect(Math.abs(event.wallTime - Date.now() / 1000)).toBeLessThan(600);
  });

  test('a folder that cannot be created is OUTPUT_UNWRITABLE naming tensorboard.logDir', () => {
    const file = scratch.write({ 'a-file': 'not a folder' }).path('a-file');
    expect(() => new EventFileWriter(path.join(file, 'tb'))).toThrow(
      expect.objectContaining({ code: 'OUTPUT_UNWRITABLE', key: 'tensorboard.logDir' }),
    );
  });
});
