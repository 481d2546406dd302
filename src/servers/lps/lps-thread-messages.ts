// Messages between the main thread and an LPS thread.

export type ToLpsThread = { type: 'stop' };

export type FromLpsThread =
  | { type: 'ready'; url: string; address: string; adminUrl: string; token: string }
  | { type: 'stopped' }
  | { type: 'error'; message: string };
