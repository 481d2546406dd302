// --duration (and --graceful-stop) accept the same duration strings as scenario files.
import { tryParseDuration } from '../scenario/parse-duration.js';

export function durationArg(value: string | undefined, flag = '--duration'): number | undefined {
  if (value === undefined) return undefined;
  const ms = tryParseDuration(value);
  if (ms === undefined) throw new Error(`${flag}: "${value}" is not a duration (examples: 90s, 2m, 1h30m)`);
  return ms;
}
