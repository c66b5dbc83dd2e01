import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { decodeForwardBackward } from '../../plugins/backend-tinker/src/client/tinkerProto.js';
import { TINKER_SERVER_TRAITS } from '../../plugins/backend-tinker/src/client/tinkerServers.js';
import type { TinkerServer } from '../../plugins/backend-tinker/src/server/TinkerServer.js';
import { client, startServer, stepView, tinkerBackend, updateRequest } from '../../plugins/backend-tinker/test/tinkerFixtures.js';
import { describeInterop } from '../support/interopSuite.js';
import { RecordingProxy } from '../support/recordingProxy.js';
import { REPO_ROOT, TempProject } from '../support/tempProject.js';

// Hosted Tinker's wire as the tinker SDK 0.38.0 (PyPI; scripts/python/tinker.txt) defines it: every request drmas
// sends to a hosted server is parsed by the SDK's own request types (which forbid unknown fields) and protobuf
// classes, and drmas decodes a forward_backward the SDK encodes. The requests are recorded on their way to
// `drmas tinker-server`, which takes the hosted wire too.

const SCRIPT = path.join(REPO_ROOT, 'test', 'interop', 'python', 'tinker_wire.py');

function sdk<T>(python: string, ...args: string[]): T {
  const run = spawnSync(python, [SCRIPT, ...args], { encoding: 'utf8', maxBuffer: 1 << 28 });
  if (run.status !== 0) throw new Error(`tinker_wire.py ${args[0]} exited ${run.status}:\n${run.stderr.slice(-3000)}`);
  return JSON.parse(run.stdout) as T;
}

interface ProtoRead {
  model_id: string;
  seq_id: number;
  loss_fn: string;
  forward_only: boolean;
  data: Array<{ tokens: number[][]; loss_fn_inputs: Record<string, { dtype: string; shape: number[]; data: number[] }> }>;
}
type Decoded = { route: string; type: string; fields: Record<string, unknown> } | { route: string; proto: ProtoRead };

describeInterop("hosted Tinker's wire against the tinker SDK's types", 'tinker', (python) => {
  let server: TinkerServer;
  let url: string;
  const project = new TempProject('tinker-wire');
  beforeAll(async () => {
    ({ server, url } = await startServer({ holdMs: 20 }));
  });
  afterAll(async () => {
    await server.stop();
    project.dispose();
  });

  test('every request drmas sends on the hosted wire is one the SDK parses; its protobuf is what drmas meant', async () => {
    const proxy = new RecordingProxy(url, () => false);
    const backend = await tinkerBackend(client(await proxy.start()), TINKER_SERVER_TRAITS.hosted);
    try {
      const view = stepView(0);
      await backend.score({ batch: view });
      await backend.update(updateRequest(view));
      await backend.generate({ prompts: [[3, 7, 1]], maxNewTokens: 3, temperature: 1, seed: 2 });
      await backend.save(project.path('ckpt'));
      await backend.load(project.path('ckpt'));
    } finally {
      backend.dispose();
      await proxy.stop();
    }
    const requests = proxy.requests.map((s) => ({
      route: s.url.replace('/api/v1/', ''),
      contentType: s.headers['content-type'],
      body: s.bytes.toString('base64'),
    }));
    writeFileSync(project.path('requests.json'), JSON.stringify(requests));
    const decoded = sdk<Decoded[]>(python, 'decode', project.path('requests.json'));
    expect(decoded).toHaveLength(requests.length);
    const routes = new Set(decoded.map((d) => d.route));
    for (const route of ['create_session', 'create_model', 'forward_backward', 'optim_step', 'save_weights_for_sampler', 'asample'])
      expect(routes).toContain(route);
    expect(routes).toContain('save_weights');
    expect(routes).toContain('load_weights');
    expect(routes).not.toContain('forward');

    const json = decoded.filter((d): d is Extract<Decoded, { type: string }> => 'type' in d);
    const byRoute = (route: string) => json.filter((d) => d.route === route).map((d) => d.fields);
    expect(byRoute('create_model')[0]).toMatchObject({ model_seq_id: 0, base_model: 'tiny', lora_config: { rank: 8 } });
    expect(byRoute('load_weights')[0]).toMatchObject({ optimizer: true, path: expect.stringMatching(/^tinker:\/\//) });
    expect(byRoute('asample')[0]).toMatchObject({ sampling_session_id: expect.any(String), seq_id: 0 });
    expect(byRoute('optim_step')[0]).toMatchObject({ adam_params: { grad_clip_norm: 1 }, seq_id: expect.any(Number) });

    // The protobuf bodies as the SDK reads them, against drmas's own decoding of the same bytes.
    const protos = proxy.requests.filter((s) => s.headers['content-type'] === 'application/x-protobuf');
    const read = decoded.filter((d): d is Extract<Decoded, { proto: ProtoRead }> => 'proto' in d).map((d) => d.proto);
    // The score, the update's forward of each of its two micro-batches, then its forward_backward.
    expect(read.map((p) => p.forward_only)).toEqual([true, true, true, false]);
    read.forEach((p, i) => {
      const mine = decodeForwardBackward(protos[i]!.bytes);
      expect(p.seq_id).toBe(mine.seq_id);
      expect(p.data.map((d) => d.tokens.flat())).toEqual(mine.data.map((d) => d.model_input.chunks.flatMap((c) => c.tokens)));
      p.data.forEach((d, j) => {
        expect(d.loss_fn_inputs.target_tokens!.dtype).toBe('DTYPE_INT64');
        expect(d.loss_fn_inputs.target_tokens!.data).toEqual(mine.data[j]!.loss_fn_inputs.target_tokens.data);
        expect(d.loss_fn_inputs.weights!.data).toEqual(mine.data[j]!.loss_fn_inputs.weights.data);
      });
    });
    // Every request on the model has its own seq_id, in order.
    const seqs = [...json.map((d) => d.fields.seq_id), ...read.map((p) => p.seq_id)].filter((s): s is number => typeof s === 'number');
    expect(new Set(seqs).size).toBe(seqs.length);
  });

  test('drmas decodes a forward_backward the SDK encodes', () => {
    const encoded = sdk<{ bytes: string; read: ProtoRead }>(python, 'encode');
    const mine = decodeForwardBackward(Buffer.from(encoded.bytes, 'base64'));
    expect(mine).toEqual({
      model_id: 'model_abc',
      seq_id: 7,
      loss_fn: 'cross_entropy',
      forward_only: true,
      data: [
        {
          model_input: { chunks: [{ type: 'encoded_text', tokens: [5, 9, 300, 2] }] },
          loss_fn_inputs: {
            target_tokens: { data: [9, 300, 2, 77], dtype: 'int64', shape: [4] },
            weights: { data: [0, 0.5, -1.25, 2], dtype: 'float32', shape: [4] },
          },
        },
        {
          model_input: { chunks: [{ type: 'encoded_text', tokens: [511, 0] }] },
          loss_fn_inputs: {
            target_tokens: { data: [0, 42], dtype: 'int64', shape: [2] },
            weights: { data: [1, 0.125], dtype: 'float32', shape: [2] },
          },
        },
      ],
    });
  });
});
