import type { RegisterContext } from '../di/RegisterContext.js';
import type { Plugin } from '../plugins/Plugin.js';
import { Engines } from './Engines.js';
import { EngineService } from './EngineService.js';

const PLUGIN_NAME = 'drmas:engines';

/** Binds the engine service (`Engines`) over the engines the backend plugins contribute, in every kernel. */
export class EnginesPlugin implements Plugin {
  readonly name = PLUGIN_NAME;

  register(ctx: RegisterContext): void {
    ctx.bind(Engines).to(EngineService).inSingletonScope();
  }
}
