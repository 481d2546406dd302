// One line naming the machine a run's figures came from, for the text and HTML reports.

import type { RunSummary } from './summary-json.js';

/** "2 × AMD EPYC, node v20.20.2, jemalloc malloc, V8 pool of 1 thread, worker heaps grow 50 %". */
export function machineText(m: RunSummary['machine']): string {
  const parts = [`${m.cpus} × ${m.cpuModel}`, `node ${m.node}`];
  if (m.allocator) parts.push(`${m.allocator} malloc`);
  if (m.v8PoolSize !== undefined) parts.push(m.v8PoolSize === 0 ? "V8 pool sized by Node" : `V8 pool of ${m.v8PoolSize} thread${m.v8PoolSize === 1 ? '' : 's'}`);
  if (m.heapGrowingPercent !== undefined) parts.push(m.heapGrowingPercent === 0 ? 'worker heaps grow as V8 chooses' : `worker heaps grow ${m.heapGrowingPercent} %`);
  return parts.join(', ');
}
