import { DrmasError } from '../errors/DrmasError.js';
import { tokenInfo } from './Token.js';

export interface BindingRecord {
  token: symbol;
  /** For named contributions (an estimator called `drmas`, an agent called `verifier`). */
  name?: string;
  /** The plugin that made the binding. */
  plugin: string;
}

/** Remembers which plugin bound what, so errors can name plugins and `drmas info` can list contributions. */
export class BindingLedger {
  private readonly records: BindingRecord[] = [];

  record(record: BindingRecord): void {
    if (record.name !== undefined) {
      const twin = this.records.find((r) => r.token === record.token && r.name === record.name);
      if (twin) {
        const { label } = tokenInfo(record.token);
        throw new DrmasError('DUPLICATE_NAME',
          `${label} "${record.name}" is registered twice: by plugin "${twin.plugin}" and by plugin "${record.plugin}"`, {
            hint: `rename one of them, or remove one of the two plugins from the config`,
          });
      }
    }
    this.records.push(record);
  }

  bindingsOf(token: symbol, name?: string): BindingRecord[] {
    return this.records.filter((r) => r.token === token && (name === undefined || r.name === name));
  }

  namesOf(token: symbol): string[] {
    return this.records.filter((r) => r.token === token && r.name !== undefined).map((r) => r.name!);
  }

  all(): readonly BindingRecord[] {
    return this.records;
  }
}
