// Messages between the main thread and the controller's thread.

export type ToControllerThread = { type: 'stop' };

export type FromControllerThread =
  | { type: 'ready'; url: string; adminUrl: string; v1Url?: string; rootCaPem: string; rootCaPath: string }
  | { type: 'stopped' }
  | { type: 'error'; message: string };
