import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

export interface PageAssets {
  /** uPlot's `uPlot.iife.min.js`: defines the global `uPlot`. */
  uplotScript: string;
  uplotCss: string;
  /** This package's `assets/reportPage.js`: the function that draws the charts and runs the rollout browser. */
  pageScript: string;
}

let cached: PageAssets | undefined;

/**
 * The scripts and the stylesheet report.html inlines, read once from the installed packages. The page script is
 * found from this module's own folder: `../../assets` is the same file from `src/report` and from `dist/report`.
 */
export function pageAssets(): PageAssets {
  if (!cached) {
    const require = createRequire(import.meta.url);
    cached = {
      uplotScript: readFileSync(require.resolve('uplot/dist/uPlot.iife.min.js'), 'utf8'),
      uplotCss: readFileSync(require.resolve('uplot/dist/uPlot.min.css'), 'utf8'),
      pageScript: readFileSync(new URL('../../assets/reportPage.js', import.meta.url), 'utf8'),
    };
  }
  return cached;
}

/** The page script as the text of a `<script>` element: the function, called with the data element's id. */
export function reportPageScript(dataElementId: string): string {
  return `(${pageAssets().pageScript.trim()})(${JSON.stringify(dataElementId)});`;
}
