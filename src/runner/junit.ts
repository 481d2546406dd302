// JUnit XML for CI: one test case per threshold, the text report as system-out, so a CI page shows
// which bound failed and by how much. A threshold not checked (the target cannot provide its
// figure) is a skipped test case with the reason.

import type { RunSummary } from './summary-json.js';
import { renderReport } from './report-table.js';

export function renderJUnit(s: RunSummary): string {
  const failures = s.thresholds.filter((t) => t.status === 'failed').length;
  const skipped = s.thresholds.filter((t) => t.status === 'not-checked').length;
  const tests = s.thresholds.length;
  const time = (s.durationMs / 1000).toFixed(3);
  const suite = `evesim ${s.scenario}`;
  const cases = s.thresholds.map((t) => {
    const open = `    <testcase classname="${xml(`evesim.${s.scenario}`)}" name="${xml(t.source)}" time="0">`;
    if (t.status === 'passed') return `${open}</testcase>`;
    if (t.status === 'not-checked') return `${open}\n      <skipped message="${xml(t.detail)}"/>\n    </testcase>`;
    return `${open}\n      <failure type="threshold" message="${xml(t.detail)}">${xml(`${t.source}${t.perDevice ? ` (${t.perDevice.effective})` : ''}: ${t.detail}`)}</failure>\n    </testcase>`;
  });
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="evesim" tests="${tests}" failures="${failures}" time="${time}">`,
    `  <testsuite name="${xml(suite)}" tests="${tests}" failures="${failures}" errors="0" skipped="${skipped}" time="${time}" timestamp="${xml(s.startedAt)}">`,
    '    <properties>',
    `      <property name="scenarioFile" value="${xml(s.scenarioFile)}"/>`,
    `      <property name="seed" value="${s.seed}"/>`,
    `      <property name="target" value="${xml(s.target)}"/>`,
    `      <property name="exitCode" value="${s.exitCode}"/>`,
    '    </properties>',
    ...cases,
    `    <system-out>${xml(renderReport(s))}</system-out>`,
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n');
}

function xml(text: string): string {
  // Control characters other than tab/newline are not allowed in XML 1.0 at all.
  return text
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g, '')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;');
}
