// Whether a directory the run will write into (--state-dir, --record) can be written: it exists and
// is a writable directory, or it does not exist yet and its nearest existing parent is one (the run
// creates it). Checked before anything is made, so a typo is exit 2 at once, not a failure later.

import { accessSync, constants, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

export function writableDirProblem(dir: string): string | undefined {
  let at = resolve(dir);
  for (;;) {
    let isDir: boolean;
    try {
      isDir = statSync(at).isDirectory();
    } catch {
      const parent = dirname(at);
      if (parent === at) return 'no part of the path exists';
      at = parent;
      continue;
    }
    const which = at === resolve(dir) ? 'it' : `its parent ${at}`;
    if (!isDir) return `${which} is not a directory`;
    try {
      accessSync(at, constants.W_OK | constants.X_OK);
    } catch {
      return `${which} is not writable`;
    }
    return undefined;
  }
}
