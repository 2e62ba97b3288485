import type { Page } from '@playwright/test';
import { collectConsoleErrors, expectNoRawKeys } from '../support/console-checks';
import { baseUrl, expect, test } from '../support/fixtures';
import { generateLogHistory, installLines, type LogHistory } from '../support/logs-history';
import { accessToken } from '../support/services-api';
import { toast } from '../support/toasts';
import { expectChineseOnly } from '../support/zh-text-check';

/** What one row of the Logs table shows. */
interface ShownRow {
  time: string;
  service: string;
  serviceId: string;
  phase: string;
  phaseLabel: string;
  level: string;
  levelLabel: string;
  levelHasIcon: boolean;
  message: string;
}

async function shownRows(page: Page): Promise<ShownRow[]> {
  return page.getByTestId('log-row').evaluateAll((rows) =>
    rows.map((row) => {
      const cells = row.querySelectorAll('td');
      const phase = row.querySelector('[data-phase]');
      const level = row.querySelector('[data-level]');
      return {
        time: cells[0]?.textContent ?? '',
        service: cells[1]?.querySelector('[data-i18n-data]')?.textContent ?? '',
        serviceId: row.querySelector('[data-testid="log-service-id"]')?.textContent ?? '',
        phase: phase?.getAttribute('data-phase') ?? '',
        phaseLabel: phase?.textContent ?? '',
        level: level?.getAttribute('data-level') ?? '',
        levelLabel: level?.textContent ?? '',
        levelHasIcon: !!level?.querySelector('svg'),
        message: row.querySelector('[data-testid="log-message"]')?.textContent ?? '',
      };
    }),
  );
}

const showing = (page: Page) => page.getByTestId('logs-showing');
const pager = (page: Page) => page.getByRole('navigation', { name: 'Pages' });
const pageButtons = (page: Page) => pager(page).getByRole('button', { name: /^Page \d+$/ });

/**
 * The rows once every one of them satisfies `shown` (there is at least one): the rows of the previous search
 * stay on the screen until the new answer arrives, and its "Showing …" line may read the same.
 */
async function rowsWhere(page: Page, shown: (row: ShownRow) => boolean): Promise<ShownRow[]> {
  let rows: ShownRow[] = [];
  await expect
    .poll(async () => {
      rows = await shownRows(page);
      return rows.length > 0 && rows.every(shown);
    })
    .toBe(true);
  return rows;
}

async function search(page: Page, filters: { id?: string; name?: string; phase?: string; level?: string }): Promise<void> {
  await page.getByLabel('Service ID').fill(filters.id ?? '');
  await page.getByLabel('Service name').fill(filters.name ?? '');
  await page.getByLabel('Phase').selectOption(filters.phase ?? 'all');
  await page.getByLabel('Level').selectOption(filters.level ?? 'all');
  await page.getByRole('button', { name: 'Search' }).click();
}

/** 'YYYY-MM-DD HH:mm:ss' in the browser's zone, which is this machine's, as epoch ms. */
function parseShownTime(text: string): number {
  const [date = '', time = ''] = text.split(' ');
  const [y, mo, d] = date.split('-').map(Number);
  const [h, mi, s] = time.split(':').map(Number);
  return new Date(y ?? 0, (mo ?? 1) - 1, d ?? 0, h ?? 0, mi ?? 0, s ?? 0).getTime();
}

let history: LogHistory;

test.beforeAll(async ({ playwright }) => {
  // Ten healthy installs and four failing ones, one process at a time: about half a minute.
  test.setTimeout(240_000);
  const request = await playwright.request.newContext({ baseURL: baseUrl() });
  history = await generateLogHistory(request, await accessToken(request), { healthy: 10, broken: 4 });
  await request.dispose();
});

test.describe('logs: the history the gateway wrote, filtered and paged', () => {
  test.setTimeout(120_000);

  test('install lines over three pages match what each install wrote, newest first', async ({ page, signedIn }) => {
    expect(signedIn.user.role).toBeGreaterThanOrEqual(10);
    const consoleErrors = collectConsoleErrors(page);
    await page.goto('/logs');
    await expect(page.getByRole('heading', { name: 'Logs', level: 1 })).toBeVisible();
    await search(page, { name: history.prefix, phase: 'install' });
    await expect(showing(page)).toHaveText('Showing 1 to 20 of 42');
    await expect(pageButtons(page)).toHaveText(['1', '2', '3']);
    await expect(pager(page).getByRole('button', { name: 'Previous' })).toBeDisabled();

    const seen: ShownRow[] = [];
    seen.push(...(await shownRows(page)));
    await pager(page).getByRole('button', { name: 'Page 2' }).click();
    await expect(showing(page)).toHaveText('Showing 21 to 40 of 42');
    await expect(pager(page).getByRole('button', { name: 'Page 2' })).toHaveAttribute('aria-current', 'page');
    seen.push(...(await shownRows(page)));
    await pager(page).getByRole('button', { name: 'Next' }).click();
    await expect(showing(page)).toHaveText('Showing 41 to 42 of 42');
    await expect(pager(page).getByRole('button', { name: 'Next' })).toBeDisabled();
    seen.push(...(await shownRows(page)));

    const expected = [...history.services].reverse().flatMap((service) => installLines(service).map((line) => ({ service, line })));
    expect(seen).toHaveLength(expected.length);
    expected.forEach(({ service, line }, i) => {
      const row = seen[i] as ShownRow;
      const where = `row ${i + 1}: ${JSON.stringify(row)}`;
      expect(row.service, where).toBe(service.name);
      expect(row.serviceId, where).toBe(`#${service.id}`);
      expect([row.phase, row.phaseLabel], where).toEqual(['install', 'Install']);
      expect([row.level, row.levelLabel, row.levelHasIcon], where).toEqual([line.level, line.level === 'error' ? 'Error' : 'Info', true]);
      expect(row.message, where).toMatch(line.message);
      expect(row.time, where).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
      const shownAt = parseShownTime(row.time);
      expect(shownAt, where).toBeGreaterThanOrEqual(Math.floor(history.startedAt / 1000) * 1000);
      expect(shownAt, where).toBeLessThanOrEqual(history.endedAt);
    });

    // The filters and the page are in the address: a reload shows the same lines.
    await expect(page).toHaveURL(new RegExp(`service_name=${history.prefix}&phase=install&page=3$`));
    await page.reload();
    await expect(showing(page)).toHaveText('Showing 41 to 42 of 42');
    await expect(page.getByLabel('Service name')).toHaveValue(history.prefix);
    await expect(page.getByLabel('Phase')).toHaveValue('install');
    expect(await shownRows(page)).toEqual(seen.slice(40));
    expect(consoleErrors).toEqual([]);
  });

  test('service id and level narrow the list to one failing service’s errors and warnings', async ({ page, signedIn }) => {
    expect(signedIn.user.role).toBeGreaterThanOrEqual(10);
    const broken = history.services.find((s) => !s.healthy);
    if (!broken) throw new Error('no failing service was generated');
    await page.goto('/logs');

    await search(page, { id: String(broken.id), level: 'error' });
    await expect(page).toHaveURL(new RegExp(`\\?service_id=${broken.id}&level=error$`));
    await expect(showing(page)).toHaveText(/^Showing 1 to \d+ of \d+$/);
    const errors = await rowsWhere(page, (r) => r.serviceId === `#${broken.id}` && r.level === 'error');
    expect(errors.every((r) => r.service === broken.name)).toBe(true);
    expect(errors.every((r) => r.levelLabel === 'Error' && r.levelHasIcon)).toBe(true);
    // The failed first check (install) and the process's exit seen by the gateway (run).
    expect(errors.filter((r) => r.phase === 'install').map((r) => r.message)).toEqual([expect.stringMatching(/^Health check failed: /)]);
    expect(errors.filter((r) => r.phase === 'run').map((r) => r.message)).toContainEqual(expect.stringMatching(/exited with code 1/));
    await expect(showing(page)).toHaveText(`Showing 1 to ${errors.length} of ${errors.length}`);

    await search(page, { name: `${history.prefix}-bad`, phase: 'run', level: 'warn' });
    await expect(showing(page)).toHaveText(/^Showing 1 to \d+ of \d+$/);
    const warnings = await rowsWhere(page, (r) => r.level === 'warn' && r.service.startsWith(`${history.prefix}-bad-`));
    expect(warnings.length).toBeGreaterThanOrEqual(4);
    for (const row of warnings) {
      expect([row.phase, row.level, row.levelLabel, row.levelHasIcon]).toEqual(['run', 'warn', 'Warn', true]);
      expect(row.message).toMatch(/^ignored non-JSON-RPC output on stdout: /);
      expect(row.service.startsWith(`${history.prefix}-bad-`)).toBe(true);
    }
    expect(warnings.map((r) => r.message)).toContain('ignored non-JSON-RPC output on stdout: Available transports:');

    await search(page, { name: `${history.prefix}-ok`, level: 'error' });
    await expect(page.getByText('No logs found')).toBeVisible();
    await expect(page.getByText('No lines match these filters. Clear them to see the whole log.')).toBeVisible();
    await expect(showing(page)).toBeHidden();
    await expect(pager(page)).toBeHidden();

    await page.getByRole('button', { name: 'Clear' }).click();
    await expect(page).toHaveURL(/\/logs$/);
    await expect(page.getByLabel('Service name')).toHaveValue('');
    await expect(page.getByLabel('Level')).toHaveValue('all');
    // The whole log of the shared server: other specs write too, so only its shape is known.
    await expect(showing(page)).toHaveText(/^Showing 1 to 20 of [\d,]+$/);
  });

  test('every line of the generated services, paged to the end with the five-button window', async ({ page, signedIn }) => {
    expect(signedIn.user.role).toBeGreaterThanOrEqual(10);
    await page.goto(`/logs?service_name=${history.prefix}`);
    await expect(showing(page)).toHaveText(/^Showing 1 to 20 of \d+$/);
    const total = Number(/of (\d+)$/.exec((await showing(page).textContent()) ?? '')?.[1]);
    // 42 install lines, at least a start and a greeting per healthy run, and each failing start's seven: its start,
    // four ignored stdout lines, its stderr as one entry (decision 0045) and its exit.
    expect(total).toBeGreaterThanOrEqual(42 + 10 * 2 + 4 * 7);
    const pages = Math.ceil(total / 20);
    await expect(pageButtons(page)).toHaveText(['1', '2', '3', '4', '5']);
    const newest = (await shownRows(page))[0];
    expect(newest?.service).toBe(history.services.at(-1)?.name);

    const names = new Set(history.services.map((s) => s.name));
    for (let current = 2; current <= pages; current += 1) {
      await pager(page).getByRole('button', { name: 'Next' }).click();
      const end = Math.min(current * 20, total);
      await expect(showing(page)).toHaveText(`Showing ${(current - 1) * 20 + 1} to ${end} of ${total}`);
      const buttons = (await pageButtons(page).allTextContents()).map(Number);
      expect(buttons).toHaveLength(5);
      expect(buttons).toContain(current);
      expect(buttons.at(-1)).toBe(Math.min(Math.max(current + 2, 5), pages));
      await expect(pager(page).getByRole('button', { name: `Page ${current}` })).toHaveAttribute('aria-current', 'page');
      const rows = await shownRows(page);
      expect(rows).toHaveLength(end - (current - 1) * 20);
      expect(rows.every((r) => names.has(r.service))).toBe(true);
    }
    await expect(pager(page).getByRole('button', { name: 'Next' })).toBeDisabled();
    const oldest = (await shownRows(page)).at(-1);
    expect(oldest?.service).toBe(history.services[0]?.name);
  });
});

test.describe('logs in Chinese, the dark theme and a small screen', () => {
  const NAMESPACES = ['common', 'logs'];

  async function expectTranslated(page: Page): Promise<void> {
    await expectChineseOnly(page, NAMESPACES, ['Toolport']);
    await expectNoRawKeys(page);
  }

  test('the screen shows no raw key and no English, in every state', async ({ page, signedIn }) => {
    expect(signedIn.user.role).toBeGreaterThanOrEqual(10);
    const consoleErrors = collectConsoleErrors(page);
    await page.addInitScript(() => {
      localStorage.setItem('i18nextLng', 'zh-CN');
      localStorage.setItem('theme', 'dark');
    });
    await page.goto(`/logs?service_name=${history.prefix}&phase=install`);
    await expect(page.getByRole('heading', { name: '日志', level: 1 })).toBeVisible();
    await expect(page.locator('html')).toHaveClass(/dark/);
    await expect(showing(page)).toHaveText(/^显示第 1 到 \d+ 条，共 \d+ 条$/);
    await expect(page.getByTestId('log-row').first().locator('[data-phase]')).toHaveText('安装');
    await expect(page.getByRole('columnheader', { name: '消息' })).toBeVisible();
    await expect(page.getByRole('navigation', { name: '分页' }).getByRole('button', { name: '第 1 页' })).toHaveAttribute(
      'aria-current',
      'page',
    );
    await expectTranslated(page);

    await page.getByLabel('服务 ID').fill('1.5');
    await page.getByRole('button', { name: '搜索' }).click();
    await expect(page.getByText('服务 ID 必须是整数。')).toBeVisible();
    await expectTranslated(page);

    await page.getByLabel('服务 ID').fill('');
    await page.getByLabel('服务名称').fill(`${history.prefix}-none`);
    await page.getByRole('button', { name: '搜索' }).click();
    await expect(page.getByText('未找到日志')).toBeVisible();
    await expectTranslated(page);
    expect(consoleErrors).toEqual([]);

    // No answer at all: the load-error toast, in Chinese.
    await page.route(
      (url) => url.pathname === '/api/mcp_logs',
      (route) => route.abort(),
    );
    await page.getByRole('button', { name: '清除' }).click();
    await expect(toast(page, '加载日志失败')).toContainText('网络错误：请检查你的网络连接');
    await expect(page.getByRole('button', { name: '重试' })).toBeVisible();
    await expectTranslated(page);
  });

  test('fits a 375 px wide screen: each line stacks, the message reads without scrolling sideways', async ({ page, signedIn }) => {
    expect(signedIn.user.role).toBeGreaterThanOrEqual(10);
    await page.setViewportSize({ width: 375, height: 800 });
    await page.goto(`/logs?service_name=${history.prefix}`);
    const message = page.getByTestId('log-message').first();
    await expect(message).toBeVisible();
    const inside = async (what: string, box: { x: number; width: number } | null) =>
      expect(box && box.x >= 0 && box.x + box.width <= 375, `${what} inside the screen: ${JSON.stringify(box)}`).toBe(true);
    await inside('message', await message.boundingBox());
    await inside('level badge', await page.getByTestId('log-row').first().locator('[data-level]').boundingBox());
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    const next = pager(page).getByRole('button', { name: 'Next' });
    await inside('Next', await next.boundingBox());
    await next.click();
    await expect(showing(page)).toHaveText(/^Showing 21 to /);
  });
});
