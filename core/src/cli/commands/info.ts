import { createKernel } from '../../kernel/createKernel.js';
import type { Kernel } from '../../kernel/Kernel.js';
import { HOOK_NAMES } from '../../kernel/KernelHooks.js';
import '../../services/Environment.js';
import { InfoSection } from '../../services/InfoSection.js';
import type { ModuleOrigin } from '../../plugins/PluginLoader.js';
import { CONFIG_HELP, CONFIG_OPTIONS, type CliCommand } from '../CliCommand.js';

export interface InfoReport {
  configFile: string | null;
  presets: Array<{ name: string; version: string | null; resolvedFrom: string; listedAt: string }>;
  plugins: Array<{ name: string; package: string | null; version: string | null; resolvedFrom: string; listedAt: string }>;
  /** Optional plugins of the presets that are not installed, with what each would provide. */
  absentPlugins: Array<{ name: string; package: string; listedAt: string; provides: Record<string, string[]> }>;
  hooks: Record<string, Array<{ name: string; type: string; stage: number }>>;
  /** Named roles by token name (`Agent`, `AdvantageEstimator`, `BackendFactory`, `Orchestra`, `Environment`, ...). */
  roles: Record<string, { label: string; configKey: string | null; entries: Array<{ name: string; plugin: string }> }>;
  /** Sections plugins contribute (e.g. `workerGroups`, `workflow`). */
  sections: Record<string, unknown>;
}

function origin(m: ModuleOrigin) {
  return { version: m.version ?? null, resolvedFrom: m.resolvedFrom, listedAt: `${m.listedIn} ${m.key}` };
}

export function infoReport(
  kernel: Kernel,
  configFile: string | undefined,
  presets: Array<ModuleOrigin & { preset: { name: string } }>,
): InfoReport {
  const hooks: InfoReport['hooks'] = {};
  for (const name of HOOK_NAMES) {
    hooks[name] = kernel.tapsOf(name);
  }
  const roles: InfoReport['roles'] = {};
  for (const token of kernel.ledger.namedTokens()) {
    roles[token.name] = {
      label: token.label,
      configKey: token.configKey ?? null,
      entries: kernel.ledger
        .bindingsOf(token)
        .filter((r) => r.name !== undefined)
        .map((r) => ({ name: r.name!, plugin: r.plugin })),
    };
  }
  const sections: Record<string, unknown> = {};
  for (const section of kernel.getAll(InfoSection)) sections[section.title] = section.describe(kernel);
  return {
    configFile: configFile ?? null,
    presets: presets.map((p) => ({ name: p.packageName ?? p.preset.name, ...origin(p) })),
    plugins: kernel.plugins.map((p) => ({ name: p.plugin.name, package: p.packageName ?? null, ...origin(p) })),
    absentPlugins: kernel.absentPlugins.map((p) => ({
      name: p.request,
      package: p.packageName,
      listedAt: `${p.listedIn} ${p.key}`,
      provides: p.provides,
    })),
    hooks,
    roles,
    sections,
  };
}

function printText(report: InfoReport, write: (text: string) => void): void {
  const out = (line = '') => write(`${line}\n`);
  out(`config: ${report.configFile ?? '(none)'}`);
  out('\npresets:');
  if (report.presets.length === 0) out('  (none)');
  for (const p of report.presets) out(`  ${p.name}${p.version ? `@${p.version}` : ''}  from ${p.resolvedFrom}  (${p.listedAt})`);
  out('\nplugins:');
  for (const p of report.plugins) out(`  ${p.name}${p.version ? `@${p.version}` : ''}  from ${p.resolvedFrom}  (${p.listedAt})`);
  for (const p of report.absentPlugins) out(`  ${p.name}  not installed, optional: npm i ${p.package}  (${p.listedAt})`);
  out('\nhooks (taps in call order):');
  for (const [hook, taps] of Object.entries(report.hooks)) {
    out(`  ${hook.padEnd(13)} ${taps.length ? taps.map((t) => `${t.name}${t.stage ? `@${t.stage}` : ''}`).join(' -> ') : '-'}`);
  }
  for (const { label, entries } of Object.values(report.roles)) {
    out(`\n${label}s:`);
    if (entries.length === 0) out('  (none)');
    for (const e of entries) out(`  ${e.name.padEnd(24)} (plugin ${e.plugin})`);
  }
  for (const [title, data] of Object.entries(report.sections)) {
    out(`\n${title}:`);
    const rows: unknown[] = Array.isArray(data) ? data : [data];
    for (const row of rows) {
      out(
        `  ${
          typeof row === 'object' && row !== null
            ? Object.entries(row)
                .map(([k, v]) => `${k}: ${Array.isArray(v) ? v.join(', ') : String(v)}`)
                .join('; ')
            : String(row)
        }`,
      );
    }
  }
}

export const infoCommand: CliCommand = {
  name: 'info',
  summary: 'show resolved presets and plugins, every hook with its taps, and the registered agents, estimators, ...',
  usage: 'drmas info [--config PATH] [--set KEY=VALUE ...] [--json]',
  help: [...CONFIG_HELP, ['--json', 'print the report as JSON']],
  options: { ...CONFIG_OPTIONS, json: { type: 'boolean' } },
  async run({ values }, io) {
    const { kernel, file, presets } = await createKernel({
      cwd: io.cwd,
      configPath: values.config as string | undefined,
      overrides: values.set as string[] | undefined,
      required: false,
      warn: (message) => io.stderr.write(`drmas: ${message}\n`),
    });
    const report = infoReport(kernel, file, presets);
    // Sections quote the config (a remote environment's urls, an engine's server): its credentials stay here.
    const write = (text: string) => io.stdout.write(kernel.secrets.redact(text));
    if (values.json) write(`${JSON.stringify(report, null, 2)}\n`);
    else printText(report, write);
    return 0;
  },
};
