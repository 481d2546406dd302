// What EVE's local profile server client keeps in /persist across reboots (eve-wire-facts §11.3):
// lastdevcmdtimestamp, appCommands, lastradioconfig and lastlocalprofile. Apart from lps-agent.ts
// so the device's disk state can name it without importing the agent.

import type { LpsAppCommandRecord } from './lps-app-commands.js';

export interface LpsPersistedState {
  lastDevCmdTimestamp: number;
  localProfile: string;
  radioSilence: boolean;
  appCommands: LpsAppCommandRecord[];
}
