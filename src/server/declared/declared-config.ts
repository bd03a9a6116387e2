/**
 * `serve --config FILE`: the file read and checked before the store opens, applied before the
 * server listens, and read, checked and applied again on SIGHUP. Never on a request's path.
 */
import type { DeclaredConfig } from "./config-model.js";
import { type ApplyServices, type ApplySummary, applyDeclaredConfig } from "./config-apply.js";
import { type ConfigSource, DeclaredConfigError, readConfigFile } from "./config-source.js";
import { checkDeclaredConfig } from "./config-validate.js";

export { DeclaredConfigError } from "./config-source.js";

export interface DeclaredConfigEvents {
  onApplied(summary: ApplySummary & { file: string }): void;
  /** A reload found the file invalid (nothing changed), or a write failed midway. */
  onApplyFailed(message: string): void;
}

/** Reads and checks a config file; throws DeclaredConfigError with the file, line and field. */
export async function loadDeclaredConfig(file: string, defaultAccountId: string): Promise<{ source: ConfigSource; config: DeclaredConfig }> {
  const source = await readConfigFile(file);
  return { source, config: checkDeclaredConfig(source, defaultAccountId) };
}

export class DeclaredConfigHolder {
  private applying: Promise<void> = Promise.resolve();

  constructor(
    private readonly file: string | undefined,
    private readonly defaultAccountId: string,
    private readonly services: ApplyServices,
    private readonly events: DeclaredConfigEvents,
  ) {}

  /** Applies a loaded file (the start): its failures are the caller's (they stop the start). */
  async applyLoaded(loaded: { source: ConfigSource; config: DeclaredConfig }): Promise<ApplySummary> {
    const summary = await applyDeclaredConfig(loaded.config, this.services, loaded.source.lineOf);
    this.events.onApplied({ file: loaded.source.file, ...summary });
    return summary;
  }

  /** Reads, checks and applies the file again (SIGHUP); resolves once the outcome was reported. Never overlaps itself. */
  reload(): Promise<void> {
    const file = this.file;
    if (file === undefined) return Promise.resolve();
    this.applying = this.applying.then(async () => {
      try {
        await this.applyLoaded(await loadDeclaredConfig(file, this.defaultAccountId));
      } catch (err) {
        this.events.onApplyFailed(err instanceof DeclaredConfigError ? err.message : `${file}: ${err instanceof Error ? err.message : String(err)}`);
      }
    });
    return this.applying;
  }
}
