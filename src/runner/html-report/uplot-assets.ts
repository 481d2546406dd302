// The chart library the HTML report inlines: uPlot's minified browser build and stylesheet, read
// from the installed npm package when a report is written, so the report needs no network to view.
// I/O apart from the renderer, which takes these texts as input.

import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

export interface ChartLibrary {
  /** uPlot's IIFE build: defines the global uPlot. */
  script: string;
  stylesheet: string;
  /** The package version, named in the report's footer. */
  version: string;
}

let cached: ChartLibrary | undefined;

export function loadChartLibrary(): ChartLibrary {
  if (cached) return cached;
  const require = createRequire(import.meta.url);
  const pkgFile = require.resolve('uplot/package.json');
  const dist = join(dirname(pkgFile), 'dist');
  const version = (JSON.parse(readFileSync(pkgFile, 'utf8')) as { version: string }).version;
  cached = {
    script: readFileSync(join(dist, 'uPlot.iife.min.js'), 'utf8'),
    stylesheet: readFileSync(join(dist, 'uPlot.min.css'), 'utf8'),
    version,
  };
  return cached;
}
