// The HTML report's stylesheet: plain, printable, readable on a laptop screen and in a screenshot.

export const PAGE_STYLE = `
:root { --pass: #1b7f3b; --fail: #c62828; --muted: #666; --rule: #ddd; font-family: system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; color: #222; }
body { margin: 0; background: #fafafa; }
header { display: flex; gap: 24px; align-items: stretch; padding: 20px 28px; background: #fff; border-bottom: 6px solid var(--rule); }
header.pass { border-bottom-color: var(--pass); }
header.fail { border-bottom-color: var(--fail); }
.verdict { font-size: 56px; font-weight: 800; letter-spacing: 2px; color: #fff; padding: 12px 28px; border-radius: 8px; display: flex; align-items: center; }
header.pass .verdict { background: var(--pass); }
header.fail .verdict { background: var(--fail); }
header .run { flex: 1; min-width: 0; }
header h1 { margin: 0 0 4px; font-size: 26px; word-break: break-word; }
header .why { margin: 0 0 10px; font-size: 16px; }
header dl { display: grid; grid-template-columns: repeat(auto-fill, minmax(220px, 1fr)); gap: 4px 20px; margin: 0; }
header dt { font-size: 11px; text-transform: uppercase; color: var(--muted); }
header dd { margin: 0; font-size: 14px; word-break: break-word; }
main { padding: 8px 28px 20px; }
section { background: #fff; border: 1px solid var(--rule); border-radius: 6px; padding: 8px 18px 14px; margin: 14px 0; }
h2 { font-size: 19px; margin: 8px 0; }
h3 { font-size: 15px; margin: 14px 0 4px; }
h4, h5, h6 { font-size: 13px; margin: 10px 0 4px; color: #444; }
table { border-collapse: collapse; font-size: 13px; margin: 4px 0; }
th, td { padding: 3px 10px; text-align: left; border-bottom: 1px solid #eee; vertical-align: top; }
thead th { border-bottom: 2px solid var(--rule); font-weight: 600; }
tfoot th, tfoot td { border-top: 2px solid var(--rule); font-weight: 600; }
.num { text-align: right; font-variant-numeric: tabular-nums; }
table.kv th { font-weight: 500; color: #444; }
.muted { color: var(--muted); font-size: 13px; }
.badge { display: inline-block; min-width: 74px; text-align: center; padding: 1px 6px; border-radius: 4px; font-weight: 700; font-size: 12px; }
.badge.passed { background: #e3f4e8; color: var(--pass); }
.badge.failed { background: var(--fail); color: #fff; }
.badge.not-checked { background: #eee; color: var(--muted); }
tr.has-errors td, tr.has-errors th { color: var(--fail); }
.ok-text { color: var(--pass); }
.bad-text { color: var(--fail); }
.generic-sub { display: inline-block; vertical-align: top; margin: 0 32px 0 0; }
.notice { background: #fff8e1; border: 1px solid #ffe082; padding: 10px 14px; border-radius: 4px; }
ul.examples { margin: 0; padding-left: 18px; font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 12px; word-break: break-word; }
.charts { display: flex; flex-wrap: wrap; gap: 12px; }
figure.chart { margin: 0; flex: 1 1 100%; min-width: 0; }
figure.chart.small { flex: 0 1 calc(50% - 6px); }
figcaption { font-size: 13px; font-weight: 600; margin: 4px 0; }
details.events { margin: 6px 0; font-size: 13px; }
.marker-layer { position: absolute; inset: 0; pointer-events: none; overflow: hidden; }
.ev-marker { position: absolute; top: 0; bottom: 0; width: 0; border-left: 1.5px solid #000; }
.ev-fault-end { border-left-style: dashed !important; }
.ev-label { position: absolute; left: 3px; white-space: nowrap; font-size: 10px; line-height: 13px; background: rgba(255,255,255,0.85); padding: 0 2px; }
.drain-band { position: absolute; top: 0; bottom: 0; background: rgba(97,97,97,0.13); border-left: 1.5px dotted #616161; }
.fault-band { position: absolute; top: 0; bottom: 0; background: rgba(198,40,40,0.07); }
.drain-band span { position: absolute; right: 4px; bottom: 2px; font-size: 10px; color: #616161; }
footer { padding: 8px 28px 24px; color: var(--muted); font-size: 12px; }
@media print { body { background: #fff; } section { break-inside: avoid; } }
`;
