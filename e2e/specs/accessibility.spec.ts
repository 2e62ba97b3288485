import { createRequire } from 'node:module';
import type { Page } from '@playwright/test';
import { expect, test } from '../support/fixtures';

/**
 * Issue 15, item 7: axe-core (WCAG 2 A and AA rules) over every screen of the console, light and dark. The
 * script is injected into the page and run there, as @axe-core/playwright would (it needs a newer Node).
 */
const axePath = createRequire(import.meta.url).resolve('axe-core/axe.min.js');

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[]; html: string; failureSummary?: string }[];
}

async function violations(page: Page): Promise<string[]> {
  await page.addScriptTag({ path: axePath });
  const found = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(ctx: Document, opts: object): Promise<{ violations: AxeViolation[] }> } }).axe;
    const result = await axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } });
    return result.violations;
  });
  return found.flatMap((v) =>
    v.nodes.map((n) => `${v.id} (${v.impact}): ${v.help} at ${n.target.join(' ')}: ${n.html.slice(0, 160)} ${n.failureSummary ?? ''}`),
  );
}

const SCREENS = [
  ['/', 'Dashboard'],
  ['/services', 'Services'],
  ['/groups', 'Groups'],
  ['/market', 'Market'],
  ['/analytics', 'Analytics'],
  ['/profile', 'Profile'],
  ['/users', 'Users'],
  ['/logs', 'Logs'],
  ['/audit', 'Audit'],
  ['/preferences', 'Preferences'],
] as const;

for (const theme of ['light', 'dark'] as const) {
  test(`every screen passes axe-core in the ${theme} theme`, async ({ page, signedIn }) => {
    test.setTimeout(90_000);
    expect(signedIn.user.role).toBe(100);
    await page.addInitScript((t) => localStorage.setItem('theme', t), theme);
    const all: string[] = [];
    for (const [path, heading] of SCREENS) {
      await page.goto(path);
      await expect(page.getByRole('heading', { name: heading, level: 1 })).toBeVisible();
      await expect(page.locator('[aria-hidden="true"].animate-pulse')).toHaveCount(0);
      all.push(...(await violations(page)).map((v) => `${path}: ${v}`));
    }
    expect(all).toEqual([]);
  });

  test(`the sign-in page passes axe-core in the ${theme} theme`, async ({ page }) => {
    await page.addInitScript((t) => localStorage.setItem('theme', t), theme);
    await page.goto('/login');
    await expect(page.getByLabel('Username')).toBeVisible();
    expect(await violations(page)).toEqual([]);
  });
}
