// A Transport with one keep-alive connection per device, as a real device has: what API v1 needs
// (mutual TLS: the connection carries the device's own client certificate) and what a scenario
// asks for with `connection: per-device` on API v2.
//
// Per device ("link"): one undici Client (HTTP/1.1, no pipelining) at a time, for the client
// certificate the requests ask for (TransportRequest.clientCert). Its TLS SecureContext (trusted
// roots, ciphers, the device's key and certificate) is built once and reused for every reconnect,
// and its TLS session is kept (paced-connector.ts holds it) so a reconnect resumes instead of
// doing a full handshake. When a device moves from its onboarding certificate to its device
// certificate (after registration), the old connection is closed after the requests on it finish,
// the onboarding context is dropped, and the new connection starts without a session: a session
// resumes the identity it was made with, so it must never cross certificates. A device that goes
// down (deviceDown) loses its connection and session as a rebooted EVE does: closed after a
// command, abandoned without a FIN after a power loss and reset when it finally closes. A network
// fault (connectionLost) costs the connection as it costs EVE's: reset on the path, or closed with a
// FIN that a partition holds back until the network is back. Devices without a
// client certificate share one context. Connects of all devices go through one ConnectPacer, so a
// controller restart does not turn into a synchronised handshake storm.
//
// Memory: a SecureContext with a client key costs about 32-36 KiB and an idle TLS socket 10-16
// KiB (docs/architecture.md); bench/tls-handshakes.ts measures the whole per-device cost.

import { responseBodyLimit } from './response-body-limits.js';
import { requestDeadlineMs } from './controller-transport.js';
import type { KeyObject } from 'node:crypto';
import type net from 'node:net';
import tls from 'node:tls';
import { Client } from 'undici';
import type { ClientCertKind, Transport, TransportRequest, TransportResponse } from '../device/ports.js';
import { ConnectPacer } from './connect-pacer.js';
import { EVE_TLS_CIPHERS, Exchange, parseBaseUrl, type ExchangeOwner } from './controller-transport.js';
import { makePacedConnector, type ConnectorCounters, type TlsSessionHolder } from './paced-connector.js';
import type { ControllerClientOptions } from './controller-client-options.js';
import type { OwnConnectionFigures } from './own-connection-figures.js';
import type { ConnectionLossHow, DeviceDownHow } from './worker-transport.js';
import { resetNow, resetWhenClosed } from './reset-on-close.js';

/** The certificates a device can present. Key objects are made once per device (identity layer). */
export interface ClientIdentity {
  onboardCertPem: string;
  onboardKey: KeyObject;
  deviceCertPem: string;
  deviceKey: KeyObject;
}

export interface PerDeviceTransportOptions extends ControllerClientOptions {
  /**
   * Also trust Node's bundled root CAs, as EVE trusts the system store. Default false when caPem
   * is given: every device has a context of its own, and the bundled roots add about 5 KiB and
   * 0.6 ms to each (handing them over as PEM, as the shared transport does, would parse 140
   * certificates per device: about 950 KiB and 95 ms each). Without caPem the system store is used.
   */
  trustSystemRoots?: boolean;
  /** The certificates of a device by fleet index; needed only by requests that carry clientCert. */
  identityOf?: (deviceIndex: number) => ClientIdentity | undefined;
  /**
   * An idle device connection closes after this (sooner if the server's Keep-Alive header asks).
   * Default 90 000, Go's default idle-connection timeout (EVE's client is Go's): a device that
   * talks every minute keeps its connection.
   */
  keepAliveTimeoutMs?: number;
}

export interface PerDeviceTransportStats extends ConnectorCounters {
  /** Devices that have a link (sent at least one request and were not detached). */
  devices: number;
  /** Sockets open now. */
  sockets: number;
  /** Requests waiting for their device's connection. */
  queued: number;
  /** Requests on the wire now. */
  running: number;
  /** Per-device TLS contexts built so far (one per device and certificate kind, never per connect). */
  contextsCreated: number;
  /** Times a device moved its connection to another client certificate. */
  certSwitches: number;
  /** Times a device went down (reboot, power loss) and its connection and TLS session were let go. */
  deviceRestarts: number;
  /** Times a network fault cost a device its connection (its next connect resumes the session). */
  connectionsLost: number;
  /** Of deviceRestarts, connections a power loss left open without a FIN (reset when they close). */
  abandonedByPowerLoss: number;
  /** Of connectionsLost, connections a partition left open, their FIN held back until the device connects again. */
  abandonedByNetwork: number;
  /** Of connectionsLost, connections a reset fault reset. */
  connectionsReset: number;
  /** Abandoned connections (either kind) still open now. */
  abandonedOpen: number;
  /** Connects waiting in the pacer, and connects the pacer delayed because they were part of a burst. */
  connectsWaiting: number;
  connectsPaced: number;
}

type Slot = ClientCertKind | 'none';

/** One device's connection state. */
class DeviceLink {
  client: Client | undefined;
  slot: Slot | undefined;
  /** The TLS session, made with the certificate of `sessionSlot`: kept when the connection is lost, not when the device goes down. */
  session: TlsSessionHolder = { session: undefined };
  sessionSlot: Slot | undefined;
  /** Contexts by slot; 'none' uses the transport's shared context and is never stored here. */
  onboardingContext: tls.SecureContext | undefined;
  deviceContext: tls.SecureContext | undefined;
  /** The socket of `client` once connected (a power loss turns its TCP keep-alive off). */
  socket: net.Socket | undefined;
  /** The TCP socket under `socket` (the same socket without TLS), for a reset. */
  tcp: net.Socket | undefined;
  /** Connections a partition cut off: their FIN goes out once the device connects again (the network is back). */
  stranded: StrandedConnection[] | undefined;
}

/** A connection a partition cut off, with its sockets: a reboot before the network is back turns its FIN into a reset. */
interface StrandedConnection {
  client: Client;
  socket: net.Socket | undefined;
  tcp: net.Socket | undefined;
}

const DEFAULTS = {
  timeoutMs: 120_000,
  connectTimeoutMs: 10_000,
  maxBodyBytes: 16 * 1024 * 1024,
  keepAliveTimeoutMs: 90_000,
  maxConcurrentConnects: 16,
  connectJitterMs: 250,
};

export class PerDeviceTransport implements Transport, ExchangeOwner {
  readonly origin: string;
  private readonly pathPrefix: string;
  private readonly https: boolean;
  private readonly links = new Map<number, DeviceLink>();
  private readonly pacer: ConnectPacer;
  private readonly counters: ConnectorCounters = { connected: 0, resumed: 0, failed: 0 };
  /** Trusted CAs handed to every context as PEM (the controller root), or undefined: see caMode. */
  private readonly ca: string[] | undefined;
  /** 'pem': `ca` only; 'system': Node's shared root store; 'system+pem': the shared store plus `ca`. */
  private readonly caMode: 'pem' | 'system' | 'system+pem';
  private readonly ciphers: string;
  private readonly timeoutMs: number;
  private readonly maxBodyBytes: number;
  private readonly keepAliveTimeoutMs: number;
  private readonly connectTimeoutMs: number;
  private sharedContext: tls.SecureContext | undefined;
  private contextsCreated = 0;
  private certSwitches = 0;
  private deviceRestarts = 0;
  private connectionsLost = 0;
  /** Connections a power loss or a partition left open and silent, until something closes them. */
  private readonly abandoned = new Set<Client>();
  /** Clients whose device lost power (or went down with their FIN unsent): a connect of theirs that completes late is silent and reset when closed. */
  private readonly deadClients = new WeakSet<Client>();
  private abandonedByPowerLoss = 0;
  private abandonedByNetwork = 0;
  private connectionsReset = 0;
  private closed = false;

  constructor(private readonly opts: PerDeviceTransportOptions) {
    const url = parseBaseUrl(opts.baseUrl);
    this.origin = url.origin;
    this.pathPrefix = url.pathname.replace(/\/+$/, '');
    this.https = url.protocol === 'https:';
    this.timeoutMs = positive('timeoutMs', opts.timeoutMs ?? DEFAULTS.timeoutMs);
    this.maxBodyBytes = positive('maxBodyBytes', opts.maxBodyBytes ?? DEFAULTS.maxBodyBytes);
    this.keepAliveTimeoutMs = positive('keepAliveTimeoutMs', opts.keepAliveTimeoutMs ?? DEFAULTS.keepAliveTimeoutMs);
    this.connectTimeoutMs = positive('connectTimeoutMs', opts.connectTimeoutMs ?? DEFAULTS.connectTimeoutMs);
    this.pacer = new ConnectPacer({
      maxConcurrent: positive('maxConcurrentConnects', opts.maxConcurrentConnects ?? DEFAULTS.maxConcurrentConnects),
      jitterMs: nonNegative('connectJitterMs', opts.connectJitterMs ?? DEFAULTS.connectJitterMs),
      random: opts.random,
    });
    this.ciphers = opts.tlsCiphers ?? EVE_TLS_CIPHERS;
    const extra = opts.caPem === undefined ? [] : typeof opts.caPem === 'string' ? [opts.caPem] : [...opts.caPem];
    extra.forEach((pem, i) => {
      if (!pem.includes('-----BEGIN CERTIFICATE-----')) {
        throw new Error(`per-device transport for ${this.origin}: root CA #${i + 1} is not a PEM certificate (no "BEGIN CERTIFICATE" line)`);
      }
    });
    this.ca = extra;
    this.caMode = extra.length === 0 ? 'system' : opts.trustSystemRoots === true ? 'system+pem' : 'pem';
    if (this.https) this.sharedContext = this.newContext(undefined, 'the shared (no client certificate) context');
  }

  request(req: TransportRequest): Promise<TransportResponse> {
    return new Promise<TransportResponse>((resolve, reject) => {
      const exchange = new Exchange(this, req, resolve, reject, responseBodyLimit(req.endpoint, this.maxBodyBytes), requestDeadlineMs(req, this.timeoutMs));
      exchange.timer = setTimeout(exchange.onDeadline, exchange.deadlineMs);
      try {
        const client = this.clientFor(req.deviceIndex, req.clientCert ?? 'none');
        client.dispatch({ path: this.pathPrefix + req.path, method: req.method, headers: req.headers, body: req.body ?? null }, exchange);
      } catch (err) {
        exchange.fail(err);
      }
    });
  }

  /** Closes a device's connection (device stopped for good) and forgets its contexts. */
  async detach(deviceIndex: number): Promise<void> {
    const link = this.links.get(deviceIndex);
    if (!link) return;
    this.links.delete(deviceIndex);
    await link.client?.close();
  }

  /**
   * The device went down (reboot, power loss, poweroff): a real device's sockets and its in-memory
   * TLS session cache die with it, so after it boots the controller sees a new connection with a
   * full handshake. Its next request connects afresh, without a session. Its TLS contexts are
   * kept: they hold only its key and certificate, which survive a reboot, and rebuilding them
   * changes nothing on the wire.
   *
   * What the controller sees of the old connection depends on how the device went down. After a
   * reboot or poweroff command ('shutdown') EVE's processes exit and the kernel closes their
   * sockets: the connection closes (FIN) once the requests on it are answered. After a power loss
   * nothing is sent: the connection is abandoned, left open and silent (TCP keep-alive turned
   * off), and the controller keeps it until it closes it itself (its idle timeout), or until the
   * idle timeout of a live device's connection (keepAliveTimeoutMs, or the Keep-Alive timeout the
   * controller announced, which undici honours a second early) would have closed it; the run's end
   * closes it too. Whichever closes it, it ends with a TCP reset, as the rebooted kernel answers the
   * controller's next segment (reset-on-close.ts). So does a connect still under way when the power
   * goes (loopback lets it complete), and a connection a partition had cut off before (its FIN
   * died with the kernel). In both cases the answers to requests in flight
   * are ignored by the device (failing them here would count them as transport errors the
   * controller never caused).
   */
  deviceDown(deviceIndex: number, how: DeviceDownHow = 'shutdown'): void {
    const link = this.links.get(deviceIndex);
    if (!link) return;
    // Also when no connection is open (a fault took it): the session must not survive the reboot.
    link.session = { session: undefined };
    this.forgetStranded(link);
    if (!link.client) return;
    this.deviceRestarts++;
    if (how === 'power-loss') {
      this.abandonedByPowerLoss++;
      // The controller learns of the death only when it sends something: the reset.
      this.diedWith(link.client, link.socket, link.tcp);
      this.abandon(link);
    } else this.letGo(link);
  }

  /**
   * A network fault broke the device's connection: EVE's client drops a connection whose request
   * failed and connects again, and having kept its TLS session in memory, resumes it; the next
   * request connects afresh and offers the session. What the controller sees of the old one
   * depends on the fault:
   *
   * - 'unreachable' (partition, blackholed or lost request): the device closes it, but its FIN is
   *   lost with every other packet. The controller keeps the connection, silent, until the
   *   device's next connect succeeds (the network is back, and the kernel's retransmitted FIN gets
   *   through), until the controller closes it, or until a live connection's idle timeout. If the
   *   device goes down before the network is back, that FIN dies with it: a reset ends it instead.
   * - 'reset': a reset on the path; the controller's socket fails with ECONNRESET now.
   * - 'closed' (the network carries packets: a name that does not resolve, a refused handshake):
   *   closed with a FIN once the requests on it are answered.
   */
  connectionLost(deviceIndex: number, how: ConnectionLossHow = 'closed'): void {
    const link = this.links.get(deviceIndex);
    if (!link?.client) return;
    this.connectionsLost++;
    if (how === 'unreachable') {
      this.abandonedByNetwork++;
      (link.stranded ??= []).push({ client: link.client, socket: link.socket, tcp: link.tcp });
      this.abandon(link);
    } else if (how === 'reset' && link.tcp) {
      this.connectionsReset++;
      resetNow(link.tcp);
      this.letGo(link);
    } else this.letGo(link);
  }

  /**
   * Leaves the link's connection open without a word (a power loss, a partition): undici closes it
   * when the controller does or when it has been idle as long as a live connection may be; until
   * then it is held here so the end of the run can close it. The next request makes a new one.
   */
  private abandon(link: DeviceLink): void {
    // A dead device's kernel sends no keep-alive probes, nor does a partitioned one's get through.
    link.socket?.setKeepAlive(false);
    const client = this.takeClient(link);
    this.abandoned.add(client);
    // Closed by either side, or its connect failed (or never started): nothing more will use it.
    const forget = (): void => {
      if (!this.abandoned.delete(client)) return;
      client.off('disconnect', forget).off('connectionError', forget);
      client.close().catch(() => undefined);
    };
    client.on('disconnect', forget).on('connectionError', forget);
    if (!client.stats.connected && client.stats.pending === 0 && client.stats.running === 0) forget();
  }

  /**
   * The device goes down while connections a partition cut off are still open at the controller:
   * its kernel dies with their unacknowledged FINs, so none gets through when the network comes
   * back. The rebooted kernel answers the controller's next segment with a reset instead, so
   * whatever closes them (the controller, the idle bound, the run's end) resets them. They stay
   * abandoned until then; the device's next connect no longer closes them.
   */
  private forgetStranded(link: DeviceLink): void {
    const stranded = link.stranded;
    if (!stranded) return;
    link.stranded = undefined;
    for (const { client, socket, tcp } of stranded) this.diedWith(client, socket, tcp);
  }

  /**
   * The kernel that owned this connection is gone: closing it sends a reset, now if its socket is
   * up, or once a connect still under way completes (connectedLate).
   */
  private diedWith(client: Client, socket: net.Socket | undefined, tcp: net.Socket | undefined): void {
    if (socket && tcp) resetWhenClosed(socket, tcp);
    this.deadClients.add(client);
  }

  /**
   * A connect that completed after its device had lost the connection (a power loss or a partition
   * while it was connecting; loopback lets it finish). The requests queued on it go out, as the
   * requests a worker handed on before the loss do; the socket then behaves as the device's state
   * says: a dead device's is silent and reset when closed, a partitioned one's waits for its FIN.
   */
  private connectedLate(link: DeviceLink, client: Client, socket: net.Socket, tcp: net.Socket | undefined): void {
    const stranded = link.stranded?.find((s) => s.client === client);
    if (stranded) {
      stranded.socket = socket;
      stranded.tcp = tcp;
    }
    const dead = this.deadClients.has(client);
    if (stranded || dead) socket.setKeepAlive(false);
    if (dead && tcp) resetWhenClosed(socket, tcp);
  }

  /** Closes the link's connection after the requests on it; the next request makes a new one. */
  private letGo(link: DeviceLink): void {
    this.takeClient(link).close().catch(() => undefined);
  }

  /** Detaches the link's current client and its sockets; the next request makes a new one. */
  private takeClient(link: DeviceLink): Client {
    const client = link.client!;
    link.client = undefined;
    link.socket = undefined;
    link.tcp = undefined;
    link.slot = undefined;
    return client;
  }

  stats(): PerDeviceTransportStats {
    let sockets = 0;
    let queued = 0;
    let running = 0;
    for (const link of this.links.values()) {
      if (!link.client) continue;
      const s = link.client.stats;
      if (s.connected) sockets++;
      queued += s.pending;
      running += s.running;
    }
    const p = this.pacer.stats();
    return {
      ...this.counters,
      devices: this.links.size,
      sockets,
      queued,
      running,
      contextsCreated: this.contextsCreated,
      certSwitches: this.certSwitches,
      deviceRestarts: this.deviceRestarts,
      connectionsLost: this.connectionsLost,
      abandonedByPowerLoss: this.abandonedByPowerLoss,
      abandonedByNetwork: this.abandonedByNetwork,
      connectionsReset: this.connectionsReset,
      abandonedOpen: this.abandoned.size,
      connectsWaiting: p.waiting,
      connectsPaced: p.paced,
    };
  }

  /** The run's cumulative connection figures; cheap (no walk over the devices), so a worker reads them every second. */
  ownConnectionFigures(): OwnConnectionFigures {
    const c = this.counters;
    return {
      devices: this.links.size,
      connects: c.connected,
      resumed: c.resumed,
      failed: c.failed,
      certSwitches: this.certSwitches,
      deviceRestarts: this.deviceRestarts,
      connectionsLost: this.connectionsLost,
      abandonedByPowerLoss: this.abandonedByPowerLoss,
      abandonedByNetwork: this.abandonedByNetwork,
      resetByNetwork: this.connectionsReset,
    };
  }

  /** Lets requests in flight finish, then closes every connection. */
  async close(): Promise<void> {
    await Promise.all(this.shutDown().map((c) => c.close().catch(() => undefined)));
  }

  /** Closes every connection now; requests in flight fail with TransportError('closed'). */
  async destroy(): Promise<void> {
    await Promise.all(this.shutDown().map((c) => c.destroy().catch(() => undefined)));
  }

  /** Refuses new requests and hands over every client: the devices' current ones and the abandoned ones. */
  private shutDown(): Client[] {
    this.closed = true;
    const clients = [...this.links.values()].map((l) => l.client).filter((c): c is Client => c !== undefined);
    clients.push(...this.abandoned);
    this.abandoned.clear();
    this.links.clear();
    return clients;
  }

  /** "POST https://host/path (device 3, config, device certificate)", for error messages. */
  describe(req: TransportRequest): string {
    const cert = req.clientCert ? `, ${req.clientCert} certificate` : '';
    return `${req.method} ${this.origin}${this.pathPrefix}${req.path} (device ${req.deviceIndex}, ${req.endpoint}${cert})`;
  }

  get requestTimeoutMs(): number {
    return this.timeoutMs;
  }

  /** The device's connection for `slot`, switching certificates when the slot changed. */
  private clientFor(deviceIndex: number, slot: Slot): Client {
    if (this.closed) throw new Error(`per-device transport for ${this.origin} is closed`);
    let link = this.links.get(deviceIndex);
    if (!link) {
      link = new DeviceLink();
      this.links.set(deviceIndex, link);
    }
    if (link.client && link.slot === slot) return link.client;
    if (link.client) {
      // Requests already queued on the old certificate finish on it; then its socket closes.
      this.certSwitches++;
      this.letGo(link);
    }
    // A session resumes the identity it was made with: another certificate starts without one.
    if (link.sessionSlot !== slot) {
      link.session = { session: undefined };
      link.sessionSlot = slot;
    }
    if (slot === 'device') link.onboardingContext = undefined;
    link.slot = slot;
    const client: Client = new Client(this.origin, {
      pipelining: 1,
      connect: makePacedConnector(
        {
          pacer: this.pacer,
          secureContext: this.https ? this.contextFor(deviceIndex, link, slot) : undefined,
          rejectUnauthorized: this.opts.insecureSkipVerify !== true,
          servername: this.opts.servername,
          connectTimeoutMs: this.connectTimeoutMs,
          keepAliveInitialDelayMs: 60_000,
          sessionHolder: link.session,
          resettable: true,
          onConnected: (socket, tcp) => {
            if (link.client !== client) {
              this.connectedLate(link, client, socket, tcp);
              return;
            }
            link.socket = socket;
            link.tcp = tcp;
            // The network is back: the FIN of a connection a partition cut off gets through now.
            const stranded = link.stranded;
            link.stranded = undefined;
            for (const old of stranded ?? []) old.client.close().catch(() => undefined);
          },
        },
        this.counters,
      ),
      keepAliveTimeout: this.keepAliveTimeoutMs,
      keepAliveMaxTimeout: Math.max(this.keepAliveTimeoutMs, 600_000),
      // Backstops only: the per-request deadline is the real limit.
      headersTimeout: this.timeoutMs + 1000,
      bodyTimeout: this.timeoutMs + 1000,
    });
    link.client = client;
    return client;
  }

  private contextFor(deviceIndex: number, link: DeviceLink, slot: Slot): tls.SecureContext {
    if (slot === 'none') return this.sharedContext!;
    const existing = slot === 'device' ? link.deviceContext : link.onboardingContext;
    if (existing) return existing;
    const id = this.opts.identityOf?.(deviceIndex);
    if (!id) throw new Error(`device ${deviceIndex}: a ${slot} client certificate was asked for, but the transport has no identity for this device`);
    const [certPem, key] = slot === 'device' ? [id.deviceCertPem, id.deviceKey] : [id.onboardCertPem, id.onboardKey];
    // TLS takes keys as PEM only; exported here once per device and kind, never logged.
    const ctx = this.newContext({ cert: certPem, key: key.export({ format: 'pem', type: 'pkcs8' }) as string }, `device ${deviceIndex} (${slot} certificate)`);
    if (slot === 'device') link.deviceContext = ctx;
    else link.onboardingContext = ctx;
    return ctx;
  }

  private newContext(client: { cert: string; key: string } | undefined, what: string): tls.SecureContext {
    try {
      const ca = this.caMode === 'pem' ? this.ca : undefined;
      const ctx = tls.createSecureContext({ ca, ciphers: this.ciphers, minVersion: 'TLSv1.2', ...client });
      // Node's shared root store plus our CAs: what createSecureContext itself does for `ca`, after
      // the roots it set up by reference (no PEM parsing of the bundled roots per device).
      if (this.caMode === 'system+pem') for (const pem of this.ca!) (ctx.context as { addCACert(pem: string): void }).addCACert(pem);
      if (client) this.contextsCreated++;
      return ctx;
    } catch (err) {
      // The message of a key parse error never contains the key itself.
      throw new Error(`per-device transport for ${this.origin}: cannot build the TLS context of ${what}: ${(err as Error).message}`, { cause: err });
    }
  }
}

function positive(name: string, v: number): number {
  if (!(Number.isFinite(v) && v > 0)) throw new Error(`per-device transport: ${name} must be a positive number, got ${v}`);
  return v;
}

function nonNegative(name: string, v: number): number {
  if (!(Number.isFinite(v) && v >= 0)) throw new Error(`per-device transport: ${name} must be >= 0, got ${v}`);
  return v;
}
