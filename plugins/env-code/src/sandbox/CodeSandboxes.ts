import type { CodeSandbox, SandboxRequest, SandboxRun } from './CodeSandbox.js';
import { PyodideSandbox, type PyodideSandboxOptions } from './PyodideSandbox.js';
import { QuickJsSandbox } from './QuickJsSandbox.js';

/** One sandbox per language, each started on first use: a run of JavaScript never loads Pyodide. */
export class CodeSandboxes implements CodeSandbox {
  private javascript?: QuickJsSandbox;
  private python?: PyodideSandbox;

  constructor(private readonly pyodideOptions: PyodideSandboxOptions = {}) {}

  run(request: SandboxRequest): Promise<SandboxRun> {
    return this.sandboxFor(request.language).run(request);
  }

  sandboxFor(language: SandboxRequest['language']): CodeSandbox {
    if (language === 'python') return (this.python ??= new PyodideSandbox(this.pyodideOptions));
    return (this.javascript ??= new QuickJsSandbox());
  }

  async dispose(): Promise<void> {
    await Promise.all([this.javascript?.dispose(), this.python?.dispose()]);
    this.javascript = undefined;
    this.python = undefined;
  }
}
