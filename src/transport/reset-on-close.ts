// A connection whose device is dead ends with a TCP reset, not a FIN: a rebooted kernel answers a
// segment of a connection it no longer knows with RST, whoever sends it (the controller's idle
// close, its keep-alive probe, its next write). evesim cannot leave the socket without an owner, so
// whatever closes it later (undici's idle timer, the peer's FIN, the end of the run) sends the
// reset in the dead kernel's place.

import type net from 'node:net';

/**
 * From now on, closing `socket` resets its TCP connection `tcp` (the same socket without TLS, the
 * one under it with TLS: paced-connector's `resettable`). undici and Node close a socket through
 * destroy() (undici 7 never ends one), so that one method of this socket object is wrapped.
 */
export function resetWhenClosed(socket: net.Socket, tcp: net.Socket): void {
  let resetting = false;
  const destroy = socket.destroy;
  socket.destroy = function (this: net.Socket, err?: Error) {
    // Once: without TLS, resetAndDestroy() calls this very method again.
    if (!resetting) {
      resetting = true;
      resetNow(tcp);
    }
    return destroy.call(this, err);
  } as net.Socket['destroy'];
}

/** Resets the TCP connection now (a reset on the path): the peer's socket fails with ECONNRESET. */
export function resetNow(tcp: net.Socket): void {
  if (!tcp.destroyed) tcp.resetAndDestroy();
}
