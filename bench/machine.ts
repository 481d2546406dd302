// The machine a benchmark ran on, as every benchmark prints it with its figures.
import os from 'node:os';

export function machineDescription(): string {
  const cpus = os.cpus();
  const load = os.loadavg().map((l) => l.toFixed(2)).join(' ');
  return (
    `${cpus[0]?.model.trim() ?? 'unknown CPU'}, ${os.availableParallelism()} cores, ${Math.round(os.totalmem() / 2 ** 30)} GiB, ` +
    `Node ${process.version}, OpenSSL ${process.versions.openssl}, ${os.platform()} ${os.arch()}, load average ${load}`
  );
}
