// `node --conditions=drmas-source --import ./bench/lib/registerTypescript.mjs script.mjs` runs workspace sources.
import { register } from 'node:module';

register('./typescriptHooks.mjs', import.meta.url);
