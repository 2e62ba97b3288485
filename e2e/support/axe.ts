import { createRequire } from 'node:module';
import type { Locator, Page } from '@playwright/test';

/**
 * axe-core (WCAG 2.0 and 2.1, levels A and AA) run in the page, as @axe-core/playwright would (it needs a newer
 * Node). `label-content-name-mismatch` (WCAG 2.5.3, label in name) is one of axe's experimental rules, off by
 * default: it is switched on, since a button whose visible words are not in its accessible name is what a
 * speech user cannot press.
 */
const axePath = createRequire(import.meta.url).resolve('axe-core/axe.min.js');

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: unknown[]; html: string; failureSummary?: string }[];
}

/** The attribute that marks the element a scoped run checks (a dialog), removed afterwards. */
const SCOPE = 'data-axe-scope';

/**
 * The violations on the page, or only inside `scope` (an open dialog: what is behind it is inert, and its
 * colours are dimmed by the overlay), one line each: rule, impact, help, where, and axe's summary.
 */
export async function axeViolations(page: Page, scope?: Locator): Promise<string[]> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.addScriptTag({ path: axePath });
  if (scope) await scope.evaluate((el, attr) => el.setAttribute(attr, ''), SCOPE);
  const found = await page.evaluate(
    async ({ scoped, attr, review }) => {
      type Axe = { run(ctx: unknown, opts: object): Promise<{ violations: AxeViolation[]; incomplete: AxeViolation[] }> };
      const axe = (window as unknown as { axe: Axe }).axe;
      const context = scoped ? { include: [[`[${attr}]`]] } : document;
      const result = await axe.run(context, {
        runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] },
        rules: { 'label-content-name-mismatch': { enabled: true } },
        resultTypes: ['violations', 'incomplete'],
      });
      document.querySelector(`[${attr}]`)?.removeAttribute(attr);
      // AXE_REVIEW=1: what axe could not decide (a colour over an image or a gradient) counts too, to look at by hand.
      return review ? [...result.violations, ...result.incomplete.map((v) => ({ ...v, id: `review:${v.id}` }))] : result.violations;
    },
    { scoped: Boolean(scope), attr: SCOPE, review: process.env.AXE_REVIEW === '1' },
  );
  return found.flatMap((v) =>
    v.nodes.map(
      (n) =>
        `${v.id} (${v.impact}): ${v.help} at ${n.target.map(String).join(' ')}: ${n.html.slice(0, 200)} ${(n.failureSummary ?? '').replace(/\s+/g, ' ')}`,
    ),
  );
}
