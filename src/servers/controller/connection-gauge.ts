// Connections a device-API listener holds: opened so far, open now, and the most open at once.
// Devices that lose power leave their connections open without a FIN (a real device's kernel dies
// without closing anything), so after a fleet's power loss a controller holds the dead connections
// beside the new ones until its keep-alive timeout closes them; this is where that shows.

import type { Server, Socket } from 'node:net';

export class ConnectionGauge {
  opened = 0;
  open = 0;
  peak = 0;

  /** Counts the listener's TCP connections from now on (before or after the TLS handshake). */
  watch(server: Server): this {
    server.on('connection', (socket: Socket) => {
      this.opened++;
      if (++this.open > this.peak) this.peak = this.open;
      socket.once('close', () => this.open--);
    });
    return this;
  }

  toJSON(): { opened: number; open: number; peak: number } {
    return { opened: this.opened, open: this.open, peak: this.peak };
  }
}
