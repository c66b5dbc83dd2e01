// The QuickJS sandbox's worker thread (see QuickJsSandbox.ts): loads the QuickJS wasm module once and runs each
// request it is sent in a fresh runtime. The host terminates this thread when a run outlives its hard deadline.
import { newQuickJSWASMModule } from 'quickjs-emscripten';
import { parentPort } from 'node:worker_threads';
import { runInQuickJs, type EngineRequest } from './runInQuickJs.js';

const port = parentPort!;
let module = newQuickJSWASMModule();
await module;

async function serve(request: EngineRequest & { id: number }): Promise<void> {
  try {
    const { result, moduleBroken } = runInQuickJs(await module, request);
    // A runtime that failed its disposal leaves the wasm instance unusable: the next run gets a new one.
    if (moduleBroken) module = newQuickJSWASMModule();
    port.postMessage({ id: request.id, result });
  } catch (error) {
    port.postMessage({ id: request.id, fatal: String((error as Error)?.message ?? error) });
  }
}

port.on('message', (request: EngineRequest & { id: number }) => void serve(request));
port.postMessage({ ready: true });
