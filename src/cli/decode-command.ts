// `evesim decode DIR`: print a --record directory as one JSON line per exchange, bodies decoded
// (envelopes opened, protobuf as proto3 JSON, newlogs gunzipped), optionally filtered.
import { readRecording } from '../transport/record-reader.js';
import { decodeExchange } from '../transport/record-decode.js';

export interface DecodeArgs {
  dir: string;
  device?: number;
  endpoint?: string;
  status?: number;
}

export async function runDecode(args: DecodeArgs): Promise<number> {
  let shown = 0;
  for await (const x of readRecording(args.dir, { verify: true })) {
    if (args.device !== undefined && x.deviceIndex !== args.device) continue;
    if (args.endpoint !== undefined && x.endpoint !== args.endpoint) continue;
    if (args.status !== undefined && x.status !== args.status) continue;
    const { request, response } = decodeExchange(x);
    const { requestBody: _q, responseBody: _r, ...meta } = x as unknown as Record<string, unknown>;
    process.stdout.write(JSON.stringify({ ...meta, request, response }) + '\n');
    shown++;
  }
  console.error(`evesim decode: ${shown} exchange(s) from ${args.dir}`);
  return 0;
}
