import { createRequire } from 'node:module';
import type { Page } from '@playwright/test';
import { collectConsoleErrors, expectNoRawKeys } from '../support/console-checks';
import { expect, test } from '../support/fixtures';
import { expectChineseOnly } from '../support/zh-text-check';

/**
 * The user documentation in the console (docs/decisions/0055-docs-in-the-console.md): the top bar's Docs opens
 * it, it moves between pages, follows the language switch, fits 360 px and passes axe-core in both themes.
 */
const axePath = createRequire(import.meta.url).resolve('axe-core/axe.min.js');

async function axeViolations(page: Page): Promise<string[]> {
  await page.addScriptTag({ path: axePath });
  return page.evaluate(async () => {
    type Violation = { id: string; help: string; nodes: { target: string[]; html: string; failureSummary?: string }[] };
    const axe = (window as unknown as { axe: { run(ctx: Document, opts: object): Promise<{ violations: Violation[] }> } }).axe;
    const result = await axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } });
    return result.violations.flatMap((v) =>
      v.nodes.map((n) => `${v.id}: ${v.help} at ${n.target.join(' ')}: ${n.html.slice(0, 120)} ${n.failureSummary ?? ''}`),
    );
  });
}

const PAGES = {
  en: ['Getting started', 'Connecting clients', 'Groups', 'OAuth', 'Operations'],
  'zh-CN': ['快速上手', '连接客户端', '分组', 'OAuth', '运维'],
} as const;

/** Product, protocol and tool names that stay as they are in the Chinese text. */
const ALLOWED = [
  'Toolport',
  'GitHub',
  'Google',
  'OAuth',
  'API',
  'MCP Registry',
  'MCP',
  'JSON',
  'URL',
  'Claude Code',
  'Claude.ai',
  'Claude',
  'ChatGPT',
  'Cursor',
  'VS Code',
  'Cherry Studio',
  'Windsurf',
  'Cline',
  'Needs login',
  'Authenticate',
  'Node.js',
  'Docker',
  'PostgreSQL',
  'Redis',
  'Prometheus',
  'SIEM',
  'SDK',
  'TypeScript',
  'Python',
  'HTTP',
  'SSE',
  'npm',
  'PyPI',
  'nginx',
];

const docsNav = (page: Page) => page.getByRole('navigation', { name: /^(Documentation pages|文档页面)$/ });
const pageTitle = (page: Page, name: string) => page.getByRole('heading', { level: 1, name, exact: true });

async function readEveryPage(page: Page, language: keyof typeof PAGES, check: () => Promise<void>) {
  for (const title of PAGES[language]) {
    await docsNav(page).getByRole('link', { name: title, exact: true }).click();
    await expect(pageTitle(page, title)).toBeVisible();
    await expect(page.getByTestId('doc-body').getByRole('heading', { level: 2 }).first()).toBeVisible();
    await check();
  }
}

test('the top bar Docs opens the documentation in English and Chinese, and moves between pages', async ({ page, signedIn }) => {
  expect(signedIn.token).toBeTruthy();
  const errors = collectConsoleErrors(page);
  await page.goto('/');
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Docs' }).click();
  await expect(page).toHaveURL(/\/docs$/);
  await expect(pageTitle(page, 'Documentation')).toBeVisible();
  await expect(page.getByText('This page is on its way.')).toHaveCount(0);
  await expect(page).toHaveTitle('Documentation · Toolport');

  await readEveryPage(page, 'en', async () => {});
  await expect(page).toHaveURL(/\/docs\/operations$/);
  // Previous and next at the foot of a page; an in-text link to another page stays in the console.
  await page.getByRole('navigation', { name: 'Previous and next page' }).getByRole('link', { name: '← OAuth' }).click();
  await expect(pageTitle(page, 'OAuth')).toBeVisible();
  await page.getByTestId('doc-body').getByRole('link', { name: 'Connecting clients' }).first().click();
  await expect(pageTitle(page, 'Connecting clients')).toBeVisible();
  await expect(page.getByTestId('doc-body').locator('pre').first()).toContainText('mcp-remote');

  // The console's language switch: the open page follows at once, and the next page loads in Chinese.
  await page.getByRole('combobox', { name: 'Language' }).selectOption('zh-CN');
  await expect(pageTitle(page, '连接客户端')).toBeVisible();
  await expect(page.getByTestId('doc-body').getByRole('heading', { level: 2, name: 'Claude 桌面版' })).toBeVisible();
  await page.getByRole('navigation', { name: '主导航' }).getByRole('link', { name: '文档' }).click();
  await expect(pageTitle(page, '文档')).toBeVisible();
  await expectChineseOnly(page, ['common'], ALLOWED);
  await expectNoRawKeys(page);
  // On the pages, file names in code (compose.yaml) look like keys to expectNoRawKeys; expectChineseOnly still
  // catches a raw key of the docs' own strings (namespace common).
  await readEveryPage(page, 'zh-CN', () => expectChineseOnly(page, ['common'], ALLOWED));
  expect(errors).toEqual([]);
});

test('the docs keep a way to the API reference', async ({ page, request }) => {
  await page.goto('/docs');
  const reference = page.waitForResponse(
    (res) => res.request().isNavigationRequest() && new URL(res.url()).pathname.startsWith('/api/docs'),
  );
  await docsNav(page).getByRole('link', { name: 'API reference' }).click();
  const res = await reference;
  expect(res.status()).toBe(200);
  expect(res.headers()['content-type']).toContain('text/html');
  const openapi = await request.get('/api/docs/json');
  expect((await openapi.json()).info.title).toBe('Toolport API');
});

test('the docs are public: a signed-out reader gets them, not the sign-in page', async ({ page }) => {
  await page.goto('/docs/getting-started');
  await expect(pageTitle(page, 'Getting started')).toBeVisible();
  await expect(page).toHaveURL(/\/docs\/getting-started$/);
  await expect(page.getByRole('button', { name: 'Log in' })).toBeVisible();
});

test('every docs page fits 360 px without sideways scrolling, in both languages', async ({ page }) => {
  await page.setViewportSize({ width: 360, height: 740 });
  for (const language of ['en', 'zh-CN'] as const) {
    await page.addInitScript((lng) => localStorage.setItem('i18nextLng', lng), language);
    await page.goto('/docs');
    await readEveryPage(page, language, async () => {
      const width = await page.evaluate(() => document.documentElement.scrollWidth);
      expect(width, page.url()).toBeLessThanOrEqual(360);
    });
  }
});

for (const theme of ['light', 'dark'] as const) {
  test(`every docs page passes axe-core in the ${theme} theme, in both languages`, async ({ page, signedIn }) => {
    test.setTimeout(120_000);
    expect(signedIn.token).toBeTruthy();
    const all: string[] = [];
    for (const language of ['en', 'zh-CN'] as const) {
      await page.addInitScript(
        ({ t, lng }) => {
          localStorage.setItem('theme', t);
          localStorage.setItem('i18nextLng', lng);
        },
        { t: theme, lng: language },
      );
      await page.goto('/docs');
      await expect(page.locator('html')).toHaveClass(theme === 'dark' ? /dark/ : /^(?!.*dark)/);
      all.push(...(await axeViolations(page)).map((v) => `${language} /docs: ${v}`));
      await readEveryPage(page, language, async () => {
        all.push(...(await axeViolations(page)).map((v) => `${language} ${page.url()}: ${v}`));
      });
    }
    expect(all).toEqual([]);
  });
}
