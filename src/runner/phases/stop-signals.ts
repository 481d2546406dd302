// The signals that end a run gracefully: Ctrl-C at a terminal, and SIGTERM, which supervisors send
// (Kubernetes when it deletes a pod, systemd, `docker stop`). The devices stop, the run reports what
// it measured; a second signal of either kind ends the process at once.
export const STOP_SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM'];
