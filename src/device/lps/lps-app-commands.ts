// EVE's bookkeeping of app commands received from a local profile server (eve-wire-facts §11.3,
// pkg/pillar/localcommand appinfo.go): which command was accepted for which app instance, whether
// it completed, and the timestamp reported back as LocalAppInfo.last_cmd_timestamp. The records
// are what EVE persists in /persist/checkpoint/appCommands, so a device that reboots mid-command
// finishes it after restart.

import { profile } from '../../gen/eve-types.js';

const Cmd = profile.AppCommand.Command;

export type LpsAppCommandKind = 'restart' | 'purge';

/** One app instance as the agent needs to see it (matching and LocalAppInfo). */
export interface LpsAppView {
  /** App instance UUID (lower case). */
  id: string;
  /** Display name. */
  name: string;
  version?: string;
  /** Current info.ZSwState. */
  state: number;
  /** Error text, when the app reports one. */
  error?: string;
}

/** Persisted record of the last command accepted for one app instance. */
export interface LpsAppCommandRecord {
  appId: string;
  /** profile.AppCommand.Command as received (unknown values kept: EVE stores them too). */
  command: number;
  /** The LPS's timestamp of the accepted command. */
  timestamp: number;
  /** Device clock when it was accepted (ms). */
  acceptedAt: number;
  completed: boolean;
  /** Timestamp of the last command that completed for this app (reported to the LPS). */
  lastCompletedTimestamp: number;
}

/** An accepted command the device must carry out now. */
export interface LpsAppCommandAction {
  appId: string;
  kind: LpsAppCommandKind;
  timestamp: number;
}

export interface AppCommandOutcome {
  actions: LpsAppCommandAction[];
  /** Entries skipped by the matching rules. */
  skipped: number;
  /** Some record changed (persist). */
  changed: boolean;
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function appCommandKind(command: number): LpsAppCommandKind | undefined {
  if (command === Cmd.COMMAND_RESTART) return 'restart';
  if (command === Cmd.COMMAND_PURGE) return 'purge';
  return undefined;
}

export class LpsAppCommands {
  /** Only apps that ever received a command have a record. */
  private readonly records = new Map<string, LpsAppCommandRecord & { issuedThisBoot: boolean }>();

  /**
   * Applies a LocalAppCmdList whose token was verified. Each entry selects an app by id and/or
   * displayname (both must match when both are given); entries with neither selector, with an
   * unparsable UUID, for an unknown app, or a second entry for an app already handled in this list
   * are skipped. A command is new when (command, timestamp) differs from the stored one.
   */
  apply(list: readonly profile.AppCommand[], apps: readonly LpsAppView[], now: number): AppCommandOutcome {
    const out: AppCommandOutcome = { actions: [], skipped: 0, changed: false };
    const handled = new Set<string>();
    for (const entry of list) {
      const id = entry.id ?? '';
      const name = entry.displayname ?? '';
      if ((id !== '' && !UUID_RE.test(id)) || (id === '' && name === '')) {
        out.skipped++;
        continue;
      }
      const wantId = id.toLowerCase();
      const app = apps.find((a) => (wantId === '' || a.id.toLowerCase() === wantId) && (name === '' || a.name === name));
      if (app === undefined || handled.has(app.id)) {
        out.skipped++;
        continue;
      }
      handled.add(app.id);
      const command = entry.command ?? 0;
      const timestamp = entry.timestamp ?? 0;
      const prev = this.records.get(app.id);
      if (prev !== undefined && prev.command === command && prev.timestamp === timestamp) continue; // already accepted
      this.records.set(app.id, {
        appId: app.id,
        command,
        timestamp,
        acceptedAt: now,
        completed: false,
        lastCompletedTimestamp: prev?.lastCompletedTimestamp ?? 0,
        issuedThisBoot: true,
      });
      out.changed = true;
      const kind = appCommandKind(command);
      if (kind !== undefined) out.actions.push({ appId: app.id, kind, timestamp });
    }
    return out;
  }

  /** The device finished the restart/purge it started for this app. Returns true when a record completed. */
  complete(appId: string): boolean {
    const rec = this.records.get(appId);
    if (rec === undefined || rec.completed || appCommandKind(rec.command) === undefined) return false;
    rec.completed = true;
    rec.lastCompletedTimestamp = rec.timestamp;
    return true;
  }

  /** Value for LocalAppInfo.last_cmd_timestamp. */
  lastCompleted(appId: string): number {
    return this.records.get(appId)?.lastCompletedTimestamp ?? 0;
  }

  /** The command accepted for an app, if any. */
  get(appId: string): Readonly<LpsAppCommandRecord> | undefined {
    return this.records.get(appId);
  }

  /** The app was removed from the configuration: EVE drops its command state. */
  forget(appId: string): boolean {
    return this.records.delete(appId);
  }

  /**
   * Accepted commands that did not complete and were not started since the last restore (a reboot
   * interrupted them) whose app is present again: start them once more.
   */
  interrupted(apps: readonly LpsAppView[]): LpsAppCommandAction[] {
    const out: LpsAppCommandAction[] = [];
    for (const rec of this.records.values()) {
      if (rec.completed || rec.issuedThisBoot) continue;
      const kind = appCommandKind(rec.command);
      if (kind === undefined) continue;
      if (!apps.some((a) => a.id === rec.appId)) continue;
      rec.issuedThisBoot = true;
      out.push({ appId: rec.appId, kind, timestamp: rec.timestamp });
    }
    return out;
  }

  snapshot(): LpsAppCommandRecord[] {
    return [...this.records.values()].map(({ issuedThisBoot: _, ...r }) => ({ ...r }));
  }

  restore(records: readonly LpsAppCommandRecord[]): void {
    this.records.clear();
    for (const r of records) this.records.set(r.appId, { ...r, issuedThisBoot: false });
  }

  get size(): number {
    return this.records.size;
  }
}
