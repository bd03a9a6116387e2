/**
 * The credentials in force, reloaded on SIGHUP and when the file changes. A reload swaps one
 * object: requests in flight finish with the credentials they started with, no connection is
 * dropped, and a file that no longer parses leaves the last good credentials in force (and says
 * why, without any secret).
 */
import { type FSWatcher, watch } from "node:fs";
import { basename, dirname } from "node:path";
import type { Credentials, CredentialsSource } from "../protocols/auth/principal.js";
import { type CredentialsEnv, loadCredentials } from "./credentials-file.js";

export interface CredentialsReloadEvents {
  /** A reload took effect: how many keys and tokens are now in force. */
  onReloaded(summary: { keys: number; tokens: number }): void;
  /** A reload failed; the previous credentials stay in force. */
  onReloadFailed(message: string): void;
}

/** A burst of file events (an editor's write + rename) makes one reload. */
const settleMs = 100;

export class CredentialsHolder implements CredentialsSource {
  private credentials: Credentials | undefined;
  private watcher: FSWatcher | undefined;
  private timer: NodeJS.Timeout | undefined;
  private reloading: Promise<void> = Promise.resolve();

  private constructor(
    private readonly file: string | undefined,
    private readonly env: CredentialsEnv,
    private readonly defaultAccountId: string,
    private readonly events: CredentialsReloadEvents,
  ) {}

  /** No file and no env credentials: open mode, current() is always undefined. */
  static async open(p: { file?: string; env: CredentialsEnv; defaultAccountId: string; events: CredentialsReloadEvents }): Promise<CredentialsHolder> {
    const holder = new CredentialsHolder(p.file, p.env, p.defaultAccountId, p.events);
    if (p.file !== undefined || p.env.apiToken !== undefined || p.env.accessKeyId !== undefined) {
      holder.credentials = await loadCredentials(p.file, p.env, p.defaultAccountId);
    }
    return holder;
  }

  get configured(): boolean {
    return this.credentials !== undefined;
  }

  current(): Credentials | undefined {
    return this.credentials;
  }

  /** Reads the file again; resolves once the outcome was reported. Reloads never overlap. */
  reload(): Promise<void> {
    if (this.credentials === undefined) return Promise.resolve();
    this.reloading = this.reloading.then(async () => {
      try {
        const next = await loadCredentials(this.file, this.env, this.defaultAccountId);
        this.credentials = next;
        this.events.onReloaded({ keys: next.accessKeys.size, tokens: next.tokensByDigest.size });
      } catch (err) {
        this.events.onReloadFailed(err instanceof Error ? err.message : String(err));
      }
    });
    return this.reloading;
  }

  /** Reloads when the file changes. Its directory is watched: editors replace files by renaming. */
  watchFile(): void {
    if (this.file === undefined || this.watcher) return;
    const name = basename(this.file);
    this.watcher = watch(dirname(this.file), { persistent: false }, (_event, changed) => {
      if (changed !== null && changed !== name) return;
      clearTimeout(this.timer);
      this.timer = setTimeout(() => void this.reload(), settleMs);
    });
    this.watcher.on("error", (err) => this.events.onReloadFailed(`stopped watching ${this.file}: ${err.message}`));
  }

  close(): void {
    clearTimeout(this.timer);
    this.watcher?.close();
    this.watcher = undefined;
  }
}
