// The HTML report (`evesim run --report`, `evesim report --html`): rendered from a hand-built
// summary with a 60-interval series and from the summary of a real short embedded run, then opened
// in Debian's chromium from file:// with the network blocked: nothing requested, no console or page
// error, every chart drew its data, the tables say what the summary says, a marker per timeline
// event, and hostile strings stay text. Screenshots go to test-artifacts/ for people to look at.
// The run part needs `npm run build` first (it runs bin/evesim.js, which runs dist/).

import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { renderHtmlReport } from '../src/runner/html-report/report-page.js';
import { loadChartLibrary } from '../src/runner/html-report/uplot-assets.js';
import { chartData } from '../src/runner/html-report/chart-specs.js';
import { escapeHtml, jsonForScriptTag } from '../src/runner/html-report/html-escape.js';
import { reportableSummaryProblem } from '../src/runner/html-report/summary-shape.js';
import { renderReport } from '../src/runner/report-table.js';
import type { RunSummary } from '../src/runner/summary-json.js';
import { runReport } from '../src/cli/report-command.js';
import { runRun } from '../src/cli/run-command.js';
import { HOSTILE, SYNTHETIC_EVENTS, syntheticSummary } from './fixtures/synthetic-summary.js';
import { browserUnavailable, ReportBrowser, type OpenedReport } from './fixtures/report-browser.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const ARTIFACTS = join(ROOT, 'test-artifacts');
const dir = mkdtempSync(join(tmpdir(), 'evesim-html-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const lib = loadChartLibrary();

function captureIo() {
  const io = { outText: '', errText: '', out: (t: string) => void (io.outText += t), err: (t: string) => void (io.errText += t) };
  return io;
}

describe('HTML report, rendered', () => {
  it('keeps hostile summary strings as text: no tag, no early end of a script block', () => {
    const html = renderHtmlReport(syntheticSummary(), lib);
    expect(html).not.toContain('<img');
    expect(html).toContain(escapeHtml(HOSTILE));
    // Exactly our three script blocks (chart data, uPlot, ours), each closed once.
    expect(html.match(/<script/gi)).toHaveLength(3);
    expect(html.match(/<\/script/gi)).toHaveLength(3);
    const json = /<script type="application\/json" id="evesim-chart-data">(.*?)<\/script>/s.exec(html)![1]!;
    expect(json).not.toMatch(/[<>&]/);
    expect(JSON.parse(json).events).toEqual(SYNTHETIC_EVENTS);
  });

  it("gives each worker's longest stall beside its p99, and a dash for a summary without one", () => {
    const s = syntheticSummary();
    const stalled = { ...s, generator: { ...s.generator, workers: [{ worker: 0, eventLoopLagP99Ms: 25, eventLoopLagMaxMs: 180.4 }, { worker: 1, eventLoopLagP99Ms: 4 }] } };
    const html = renderHtmlReport(stalled, lib);
    expect(html).toContain('<th class="num">loop lag p99 ms</th><th class="num">longest stall ms</th>');
    expect(html).toMatch(/<th scope="row">0<\/th><td class="num">25\.0<\/td><td class="num">180<\/td>/);
    expect(html).toMatch(/<th scope="row">1<\/th><td class="num">4\.00<\/td><td class="num">—<\/td>/);
  });

  it('shows finding examples given as a list with a kind as well as by kind', () => {
    const s = syntheticSummary();
    const listed = { ...s, findings: { ...s.findings, examples: [{ kind: 'bad-signature', detail: 'from a list' }, { detail: 'of no kind' }] } };
    const html = renderHtmlReport(listed as RunSummary, lib);
    expect(html).toMatch(/<th scope="row">bad-signature<\/th><td class="num">3<\/td><td><ul class="examples"><li>kind: bad-signature, detail: from a list<\/li><\/ul>/);
    expect(html).toContain('<h3>Examples</h3><ul class="examples"><li>detail: of no kind</li></ul>');
    // Without examples the kind says none was kept.
    const bare = { ...s, findings: { total: 3, byKind: { 'bad-signature': 3 } } };
    expect(renderHtmlReport(bare, lib)).toContain('no example kept');
  });

  it('escapes script-breaking characters in JSON and gives the value back', () => {
    const value = { a: '</script><!-- & \u2028 \u2029 >', b: [1, null] };
    const text = jsonForScriptTag(value);
    expect(text).not.toMatch(/[<>&\u2028\u2029]/);
    expect(JSON.parse(text)).toEqual(value);
  });

  it('says there is no time series for a summary without one, and draws nothing', () => {
    const { series: _, ...old } = syntheticSummary();
    const html = renderHtmlReport(old as RunSummary, lib);
    expect(html).toContain('id="no-series"');
    expect(html).not.toContain('<script');
    expect(html).not.toContain('data-chart=');
    // The whole-run tables are there all the same.
    expect(html.match(/<tr class="threshold /g)).toHaveLength(4);
  });

  it('charts the series: x per interval, latency gaps, stacked devices, drain start', () => {
    const s = syntheticSummary();
    const d = chartData(s.series!);
    expect(d.x).toHaveLength(60);
    expect(d.x[59]).toBe(59);
    expect(d.endS).toBe(60);
    expect(d.drainStartS).toBe(50);
    const charts = d.sections.flatMap((sec) => sec.charts);
    expect(charts.map((c) => c.id)).toEqual(['throughput', 'errors', 'controller', 'latency-0', 'latency-1', 'latency-2', 'devices', 'queued', 'loop-lag', 'busy']);
    expect(charts.find((c) => c.id === 'latency-0')!.title).toBe('config');
    const newlogs = charts.find((c) => c.title === 'newlogs')!;
    expect(newlogs.series.map((x) => x.label)).toEqual(['p50', 'p90', 'p99']);
    expect(newlogs.series[2]!.values.slice(0, 3)).toEqual([90, null, 90]);
    const throughput = charts.find((c) => c.id === 'throughput')!;
    expect(throughput.series.find((x) => x.label === 'config')!.values[55]).toBe(20);
    const errors = charts.find((c) => c.id === 'errors')!;
    expect(errors.series.map((x) => x.label)).toEqual(['errors: config', 'errors: newlogs', 'finding: bad-signature']);
    expect(errors.series[2]!.values[25]).toBe(3);
    // Stacked: the top layer is drawn first and reaches the total; the legend shows each state's own count.
    const devices = charts.find((c) => c.id === 'devices')!;
    expect(devices.series.map((x) => x.label)).toEqual(['idle', 'registering', 'onboarded']);
    expect(devices.series[0]!.values[2]).toBe(10 + 20 + 70);
    expect(devices.series[0]!.raw![2]).toBe(70);
    expect(devices.series[2]!.values[2]).toBe(10);
    expect(charts.find((c) => c.id === 'busy')!.series[0]!.values[0]).toBe(30);
  });

  it('refuses what is not a summary, naming the file and the field', () => {
    expect(reportableSummaryProblem([])).toBe('not a JSON object');
    const s = syntheticSummary() as unknown as Record<string, unknown>;
    expect(reportableSummaryProblem(s)).toBeUndefined();
    expect(reportableSummaryProblem({ ...s, thresholds: {} })).toBe('field "thresholds" is not an array');
    expect(reportableSummaryProblem({ ...s, seed: '1' })).toBe('field "seed" is not a number');
    const { scenario: _, ...noName } = s;
    expect(reportableSummaryProblem(noName)).toBe('field "scenario" is missing');
    expect(reportableSummaryProblem({ ...s, series: { intervalMs: 1000, events: [], intervals: [{ tMs: 0 }] } })).toBe(
      'field "series.intervals[0]" is not an interval (tMs, durationMs, endpoints, workers)',
    );

    const io = captureIo();
    expect(runReport({ summary: join(dir, 'missing.json'), html: join(dir, 'x.html') }, io)).toBe(2);
    expect(io.errText).toBe(`evesim report: ${join(dir, 'missing.json')}: cannot read the file (ENOENT)\n`);
    const notJson = join(dir, 'not.json');
    writeFileSync(notJson, '{ nope');
    expect(runReport({ summary: notJson }, io)).toBe(2);
    expect(io.errText).toContain(`evesim report: ${notJson}: not JSON:`);
    const partial = join(dir, 'partial.json');
    writeFileSync(partial, JSON.stringify({ ...s, generator: undefined }));
    expect(runReport({ summary: partial }, io)).toBe(2);
    expect(io.errText).toContain(`evesim report: ${partial}: not an evesim run summary: field "generator" is missing\n`);
    const good = join(dir, 'good.json');
    writeFileSync(good, JSON.stringify(s));
    expect(runReport({ summary: good, html: join(dir, 'no/such/dir/r.html') }, io)).toBe(2);
    expect(io.errText).toContain(`evesim report: --html ${join(dir, 'no/such/dir/r.html')}: directory ${join(dir, 'no/such/dir')} does not exist`);
  });

  it('evesim run --report into a missing directory is exit 2 before anything starts', async () => {
    const errors: string[] = [];
    const spy = vi.spyOn(console, 'error').mockImplementation((m: unknown) => void errors.push(String(m)));
    try {
      const report = join(dir, 'no/such/dir/r.html');
      const code = await runRun({ scenario: 'no-such-scenario.yaml', report, insecureSkipVerify: false, quiet: true }); // never opened
      expect(code).toBe(2);
      expect(errors).toEqual([`evesim: --report ${report}: directory ${join(dir, 'no/such/dir')} does not exist or is not writable`]);
    } finally {
      spy.mockRestore();
    }
  });

  it('prints the text report of a saved summary, or writes the HTML one', () => {
    const file = join(dir, 'saved.json');
    writeFileSync(file, JSON.stringify(syntheticSummary()));
    const io = captureIo();
    expect(runReport({ summary: file }, io)).toBe(0);
    expect(io.outText).toBe(renderReport(syntheticSummary()));
    const html = join(dir, 'saved.html');
    expect(runReport({ summary: file, html }, io)).toBe(0);
    expect(io.outText).toContain(`evesim report: wrote ${html} (60 intervals charted)`);
    expect(readFileSync(html, 'utf8')).toBe(renderHtmlReport(syntheticSummary(), lib));
  });
});

const unavailable = browserUnavailable();
if (unavailable) console.log(`html-report.test.ts: ${unavailable}`);

/** What the page shows, read through the DOM and the uPlot instances. */
interface PageFacts {
  ready: boolean;
  pwned: unknown;
  images: number;
  verdict: string;
  title: string;
  thresholds: { status: string; source: string; measured: string; bound: string }[];
  endpointRows: string[][];
  noSeriesNotice: boolean;
  charts: { id: string; lengths: number[]; changedPixels: number; markers: string[]; visibleMarkers: number; drainBands: number; faultBands: { left: number; width: number }[] }[];
}

async function pageFacts(o: OpenedReport): Promise<PageFacts> {
  await o.page.waitForFunction('document.readyState === "complete"');
  return o.page.evaluate(async () => {
    const w = window as unknown as { evesimCharts?: { id: string; plot: any }[]; evesimChartsReady?: boolean; __pwned?: unknown };
    const text = (e: Element | null) => (e?.textContent ?? '').trim();
    // uPlot commits changes in a microtask: give it a moment before reading the canvas again.
    const settle = () => new Promise((r) => setTimeout(r, 30));
    const charts = [];
    for (const { id, plot } of w.evesimCharts ?? []) {
      // Pixels that change when the chart's series are hidden: the data drawn, not axes and grid.
      const canvas = plot.ctx.canvas as HTMLCanvasElement;
      const pixels = () => plot.ctx.getImageData(0, 0, canvas.width, canvas.height).data as Uint8ClampedArray;
      const shown = pixels();
      for (let i = 1; i < plot.series.length; i++) plot.setSeries(i, { show: false });
      await settle();
      const hidden = pixels();
      for (let i = 1; i < plot.series.length; i++) plot.setSeries(i, { show: true });
      await settle();
      let changed = 0;
      for (let i = 0; i < shown.length; i += 4) if (shown[i] !== hidden[i] || shown[i + 1] !== hidden[i + 1] || shown[i + 2] !== hidden[i + 2]) changed++;
      const over = plot.over as HTMLElement;
      const markers = [...over.querySelectorAll('.ev-marker')] as HTMLElement[];
      charts.push({
        id,
        lengths: (plot.data as unknown[][]).map((d) => d.length),
        changedPixels: changed,
        markers: markers.map((m) => text(m)),
        visibleMarkers: markers.filter((m) => m.style.display !== 'none' && parseFloat(m.style.left) >= 0 && parseFloat(m.style.left) <= over.clientWidth).length,
        drainBands: over.querySelectorAll('.drain-band').length,
        faultBands: ([...over.querySelectorAll('.fault-band')] as HTMLElement[]).map((b) => ({ left: parseFloat(b.style.left), width: parseFloat(b.style.width) })),
      });
    }
    const endpointTable = document.querySelector('#endpoints table.endpoints');
    return {
      ready: w.evesimChartsReady === true,
      pwned: w.__pwned,
      images: document.images.length,
      verdict: text(document.getElementById('verdict')),
      title: text(document.querySelector('header h1')),
      thresholds: [...document.querySelectorAll('#thresholds tr.threshold')].map((tr) => ({
        status: (tr as HTMLElement).dataset.status ?? '',
        source: text(tr.querySelector('td.source')),
        measured: text(tr.children[2]!),
        bound: text(tr.children[3]!),
      })),
      endpointRows: endpointTable ? [...endpointTable.querySelectorAll('tbody tr, tfoot tr')].map((tr) => [...tr.children].map((c) => text(c))) : [],
      noSeriesNotice: document.getElementById('no-series') !== null,
      charts,
    };
  });
}

/** The endpoint rows of the text report (report-table.ts), cell by cell. */
function textReportEndpointRows(s: RunSummary): string[][] {
  const lines = renderReport(s).split('\n');
  const start = lines.findIndex((l) => l.startsWith('endpoint '));
  const rows: string[][] = [];
  for (const line of lines.slice(start + 1)) {
    if (line.trim() === '') break;
    if (/^-+( +-+)*$/.test(line) || line === '(no requests)') continue;
    rows.push(line.trim().split(/\s+/));
  }
  return rows;
}

function expectClean(o: OpenedReport): void {
  expect(o.blocked, 'network requests attempted').toEqual([]);
  expect(o.requested.every((u) => u.startsWith('file:'))).toBe(true);
  expect(o.consoleErrors, 'console errors').toEqual([]);
  expect(o.pageErrors, 'page errors').toEqual([]);
}

function expectTables(f: PageFacts, s: RunSummary): void {
  expect(f.verdict).toBe(s.exitCode === 0 ? 'PASS' : 'FAIL');
  expect(f.title).toBe(s.scenario);
  expect(f.thresholds.map((t) => [t.status, t.source, t.measured])).toEqual(s.thresholds.map((t) => [t.status, t.source + (t.required ? ' (required)' : ''), t.detail]));
  expect(f.endpointRows).toEqual(textReportEndpointRows(s));
}

function expectChartsDrawn(f: PageFacts, s: RunSummary): void {
  const n = s.series!.intervals.length;
  const markerEvents = s.series!.events.filter((e) => e.kind !== 'drain');
  const charts = chartData(s.series!).sections.flatMap((sec) => sec.charts);
  expect(f.ready).toBe(true);
  expect(f.charts.map((c) => c.id)).toEqual(charts.map((c) => c.id));
  for (const c of f.charts) {
    expect(c.lengths.every((l) => l === n), `${c.id}: data lengths`).toBe(true);
    // More than antialiasing noise: a lone point (an endpoint used in one interval) is about 20 pixels.
    expect(c.changedPixels, `${c.id}: pixels drawn by its series`).toBeGreaterThan(8);
    expect(c.markers, `${c.id}: a marker per timeline event`).toEqual(markerEvents.map((e) => (e.kind === 'fault-end' ? 'end: ' : '') + e.label));
    expect(c.visibleMarkers, `${c.id}: markers inside the plot`).toBe(markerEvents.length);
    const hasDrain = s.series!.intervals.some((i) => i.phase === 'drain') || s.series!.events.some((e) => e.kind === 'drain');
    expect(c.drainBands, `${c.id}: drain shaded`).toBe(hasDrain ? 1 : 0);
  }
}

describe.skipIf(unavailable !== undefined)('HTML report in chromium, offline', () => {
  let browser: ReportBrowser;
  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    browser = await ReportBrowser.start();
  });
  afterAll(async () => browser?.close());

  it('shows a synthetic 60-interval run: charts drawn with markers, tables as the summary says, hostile text inert', async () => {
    const s = syntheticSummary();
    const file = join(dir, 'synthetic.html');
    writeFileSync(file, renderHtmlReport(s, lib));
    const o = await browser.open(file);
    const f = await pageFacts(o);
    expectClean(o);
    expectTables(f, s);
    expect(f.thresholds.map((t) => t.bound)).toEqual(['< 200ms', '< 5%', '≥ 100 for 100 devices', '< 1s']);
    expect(f.noSeriesNotice).toBe(false);
    expectChartsDrawn(f, s);
    expect(f.charts).toHaveLength(10);
    // The partition is shaded from 20 s to 30 s: a sixth of the 60 s axis.
    for (const c of f.charts) {
      expect(c.faultBands, c.id).toHaveLength(1);
      const plotWidth = c.faultBands[0]!.left * 3; // it starts at 20 s of an axis from 0 to 60 s
      expect(c.faultBands[0]!.width / plotWidth, c.id).toBeCloseTo(1 / 6, 2);
    }
    // The hostile strings are shown as text and did nothing.
    expect(f.pwned).toBeUndefined();
    expect(f.images).toBe(0);
    expect(f.title).toContain(HOSTILE);
    expect(await o.page.locator('#findings ul.examples li').first().textContent()).toContain(`signature does not verify ${HOSTILE}`);
    const attestation = await o.page.locator('#attestation').innerText();
    expect(attestation).toMatch(/by code\s+SUCCESS\s+98\s+NONCE_MISMATCH\s+2/);
    const lps = await o.page.locator('#lps').innerText();
    expect(lps).toContain('site-north');
    expect(lps).toMatch(/by command[\s\S]*restart/);
    expect(lps).toMatch(/radio-off\s+20/);
    await o.page.screenshot({ path: join(ARTIFACTS, 'html-report-synthetic.png'), fullPage: true });
  });

  it('reports a real short embedded run, from `evesim run --report` and from `evesim report` of its summary', async () => {
    const main = join(ROOT, 'dist/src/cli/main.js');
    if (!existsSync(main)) throw new Error(`${main} is missing: run "npm run build" before this test`);
    const scenario = join(dir, 'short.yaml');
    writeFileSync(
      scenario,
      [
        'name: html-report-e2e',
        'seed: 5',
        'duration: 4s',
        'gracefulStop: 3s',
        'target: embedded',
        'arrival:',
        '  model: uniform',
        '  over: 1s',
        'groups:',
        '  - name: a',
        '    count: 3',
        'timeline:',
        '  - at: 2s',
        '    action: reboot',
        '    group: a',
        'thresholds:',
        '  - devices.total == 3',
        '  - ping.count > 1000000',
        '',
      ].join('\n'),
    );
    const html = join(dir, 'run.html');
    const summaryFile = join(dir, 'run.json');
    const args = [join(ROOT, 'bin/evesim.js'), 'run', scenario, '--workers', '1', '--quiet', '--state-dir', join(dir, 'state'), '--summary-json', summaryFile, '--report', html];
    const code = await promisify(execFile)(process.execPath, args, { cwd: dir }).then(
      () => 0,
      (e: { code?: number; stderr?: string }) => {
        if (e.code !== 1) throw new Error(`evesim run ended ${e.code}: ${e.stderr}`);
        return 1;
      },
    );
    expect(code).toBe(1); // ping.count > 1000000 fails
    const s = JSON.parse(readFileSync(summaryFile, 'utf8')) as RunSummary;
    expect(s.exitCode).toBe(1);

    const again = join(dir, 'again.html');
    expect(runReport({ summary: summaryFile, html: again }, captureIo())).toBe(0);
    // The same summary gives the same page, whether written by the run or rendered from its JSON.
    expect(readFileSync(again, 'utf8')).toBe(readFileSync(html, 'utf8'));
    for (const [name, file] of [['run', html], ['report', again]] as const) {
      const o = await browser.open(file);
      const f = await pageFacts(o);
      expectClean(o);
      expectTables(f, s);
      expect(f.thresholds.map((t) => t.status)).toEqual(['passed', 'failed']);
      expect(f.endpointRows.length).toBeGreaterThan(2);
      if (s.series && s.series.intervals.length > 0) {
        expect(f.noSeriesNotice).toBe(false);
        expectChartsDrawn(f, s);
        expect(s.series.events.some((e) => e.label.includes('reboot'))).toBe(true);
      } else {
        // The time series lands separately: until then the report says it has none.
        expect(f.noSeriesNotice).toBe(true);
        expect(f.charts).toEqual([]);
      }
      await o.page.screenshot({ path: join(ARTIFACTS, `html-report-real-${name}.png`), fullPage: true });
    }
  }, 120_000);
});
