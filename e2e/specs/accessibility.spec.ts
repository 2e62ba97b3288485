import { createHash, randomBytes } from 'node:crypto';
import type { Locator, Page, TestInfo } from '@playwright/test';
import { axeViolations } from '../support/axe';
import { signIn } from '../support/fixtures';
import { expectControlsOnScreen, expectDialogFits, expectNoSidewaysScroll, isCard } from '../support/phone-fit';
import { expect, LONG_SCOPED_PACKAGE, type RealData, test } from '../support/real-data';
import { accessToken, serviceNamed, uninstallNamed } from '../support/services-api';
import { findUserRow } from '../support/users-page';

/**
 * Issue 15, item 7 and issue 29 ("Tests"): axe-core over every screen and every dialog of the console, light and
 * dark, English and Chinese, as root and as a role-1 user, at 1440 and 390 px, with real data
 * (support/real-data.ts: long scoped and Chinese names, a remote that needs OAuth, a crashing stdio server, a
 * role-1 user under limits). At 390 and 360 px every screen stays as wide as the phone and every dialog opened
 * from Services and Groups fits, its buttons on screen; at 360 px the Services list and the Groups table are cards.
 *
 * One server and one set of data per worker serve every test of this file. Dialogs are found by their role (the
 * one open `dialog` or `alertdialog`), their triggers by role and the name each has in the language under test.
 */

const TEXT = {
  en: {
    configure: 'Configure',
    tools: (n: string) => `Tools of ${n}`,
    edit: (n: string) => `Edit ${n}`,
    uninstall: (n: string) => `Uninstall ${n}`,
    enable: (n: string) => `Enable ${n}`,
    why: (n: string) => `Why ${n} does not answer`,
    add: 'Add Service',
    custom: 'Custom Install',
    batch: 'Batch Import',
    list: 'List view',
    grid: 'Grid view',
    newGroup: 'New group',
    groupEdit: 'Edit',
    addUser: 'Add user',
    install: 'Install',
    installed: 'Installation Complete',
    finish: 'Finish',
    refreshKey: 'Refresh key',
    menu: 'Open menu',
    username: 'Username',
  },
  'zh-CN': {
    configure: '配置',
    tools: (n: string) => `${n} 的工具`,
    edit: (n: string) => `编辑 ${n}`,
    uninstall: (n: string) => `卸载 ${n}`,
    enable: (n: string) => `启用 ${n}`,
    why: (n: string) => `${n} 为什么没有响应`,
    add: '添加服务',
    custom: '自定义安装',
    batch: '批量导入',
    list: '列表视图',
    grid: '网格视图',
    newGroup: '新建分组',
    groupEdit: '编辑',
    addUser: '添加用户',
    install: '安装',
    installed: '安装完成',
    finish: '完成',
    refreshKey: '刷新密钥',
    menu: '打开菜单',
    username: '用户名',
  },
} as const;

type Lang = keyof typeof TEXT;
type Text = (typeof TEXT)[Lang];
type Theme = 'light' | 'dark';

/**
 * What one pass checks on each screen and dialog: axe's violations (collected, reported together at the end of
 * the test, so one run shows them all) and, on a phone, that it fits.
 */
interface Pass {
  page: Page;
  width: number;
  axe: boolean;
  /** Open the dialogs too (their content does not change with the theme's layout: one width is enough for axe). */
  dialogs: boolean;
  found: string[];
  label: string;
  /** Milliseconds spent in axe, for the run time reported with the result. */
  axeMs: number[];
}

async function runAxe(pass: Pass, where: string, scope?: Locator): Promise<void> {
  const started = Date.now();
  pass.found.push(...(await axeViolations(pass.page, scope)).map((v) => `${pass.label} ${where}: ${v}`));
  pass.axeMs.push(Date.now() - started);
}

const isPhone = (pass: Pass) => pass.width < 640;

/** The dialog (or alert dialog, or popover) open now. */
const openDialog = (page: Page) => page.locator('[role="dialog"], [role="alertdialog"]').filter({ visible: true }).last();

/** The page has loaded: its main heading (or the admins-only notice) is shown and no skeleton is left. */
async function settled(page: Page): Promise<void> {
  const main = page.getByRole('main');
  await expect(main.getByRole('heading', { level: 1 }).or(main.getByRole('alert')).first()).toBeVisible();
  await expect(page.locator('[aria-hidden="true"].animate-pulse')).toHaveCount(0);
}

async function checkScreen(pass: Pass, where: string): Promise<void> {
  await settled(pass.page);
  if (isPhone(pass)) await expectNoSidewaysScroll(pass.page, `${pass.label} ${where}`);
  if (pass.axe) await runAxe(pass, where);
}

/** Opens a dialog with `trigger`, checks it (axe inside it; on a phone, that it fits), and closes it with Escape. */
async function checkDialog(pass: Pass, trigger: Locator, what: string, opts: { always?: boolean } = {}): Promise<void> {
  if (!pass.dialogs && !opts.always) return;
  await trigger.click();
  const dialog = openDialog(pass.page);
  await expect(dialog, `${pass.label} ${what} opens`).toBeVisible();
  // Lazy dialogs show a spinner first; their content is what is checked.
  await expect(dialog.locator('[aria-hidden="true"].animate-pulse, [role="status"] .animate-spin')).toHaveCount(0);
  if (isPhone(pass)) await expectDialogFits(pass.page, dialog, pass.width, `${pass.label} ${what}`);
  if (pass.axe) await runAxe(pass, what, dialog);
  await pass.page.keyboard.press('Escape');
  await expect(dialog).toBeHidden();
}

/** The Services page: each card's controls on a phone, every dialog opened from it, and the list view. */
async function servicesPage(pass: Pass, text: Text, data: RealData, admin: boolean): Promise<void> {
  const { page } = pass;
  await page.goto('/services');
  const cards = [data.scoped, data.memory, data.chinese, data.oauth, data.crashing];
  for (const s of cards) await expect(page.getByRole('group', { name: s.display, exact: true })).toBeVisible();
  await checkScreen(pass, '/services');
  if (isPhone(pass)) {
    // Every card's switch, edit and uninstall (admins) and Configure and Tools (everyone) are there, and on screen.
    for (const s of cards) {
      const card = page.getByRole('group', { name: s.display, exact: true });
      await expect(card.getByRole('button', { name: text.configure, exact: true })).toBeVisible();
      if (admin) {
        await expect(card.getByRole('switch', { name: text.enable(s.display) })).toBeVisible();
        await expect(card.getByRole('button', { name: text.uninstall(s.display) })).toBeVisible();
      }
    }
    await expectControlsOnScreen(page.getByRole('main'), pass.width, `${pass.label} /services`);
  }

  const card = (s: { display: string }) => page.getByRole('group', { name: s.display, exact: true });
  for (const s of [data.scoped, data.chinese, data.oauth]) {
    await checkDialog(pass, card(s).getByRole('button', { name: text.configure, exact: true }), `Configure ${s.display}`);
  }
  // The tools of server-everything (one switched off): an edit form for admins, read-only for users.
  await checkDialog(
    pass,
    card(data.chinese).getByRole('button', { name: text.tools(data.chinese.display) }),
    `Tools of ${data.chinese.display}`,
  );
  await checkDialog(
    pass,
    card(data.crashing).getByRole('button', { name: text.why(data.crashing.display) }),
    'Why? of the crashing service',
  );
  if (admin) {
    await checkDialog(pass, card(data.scoped).getByRole('button', { name: text.edit(data.scoped.display) }), `Edit ${data.scoped.display}`);
    await checkDialog(
      pass,
      card(data.crashing).getByRole('button', { name: text.uninstall(data.crashing.display) }),
      `Uninstall ${data.crashing.display}`,
    );
    for (const item of [text.custom, text.batch]) {
      if (!pass.dialogs) break;
      await page.getByRole('button', { name: text.add }).click();
      await checkDialog(pass, page.getByRole('menuitem', { name: item }), item);
    }
  }

  // The list view: a table on a wide screen, one card per service on a phone.
  await page.getByRole('button', { name: text.list }).click();
  const rows = page.getByTestId('service-row');
  await expect(rows).toHaveCount(cards.length);
  await checkScreen(pass, '/services (list)');
  if (isPhone(pass)) {
    for (const s of cards) {
      const row = rows.filter({ has: page.getByRole('button', { name: text.tools(s.display) }) });
      expect(await isCard(row), `${pass.label} the row of ${s.display} is a card`).toBe(true);
    }
    await expectControlsOnScreen(page.getByRole('main'), pass.width, `${pass.label} /services (list)`);
  }
  await page.getByRole('button', { name: text.grid }).click();
}

/** The Groups page: the row (a card on a phone), and its dialogs. */
async function groupsPage(pass: Pass, text: Text, data: RealData, admin: boolean): Promise<void> {
  const { page } = pass;
  await page.goto('/groups');
  const row = page.getByTestId('group-row').filter({ hasText: `/group/${data.group.name}/mcp` });
  await expect(row).toBeVisible();
  await checkScreen(pass, '/groups');
  if (isPhone(pass)) {
    expect(await isCard(row), `${pass.label} the group row is a card`).toBe(true);
    await expectControlsOnScreen(page.getByRole('main'), pass.width, `${pass.label} /groups`);
  }
  await checkDialog(pass, row.getByRole('button', { name: text.configure, exact: true }), `Configure ${data.group.name}`);
  if (admin) {
    await checkDialog(pass, row.getByRole('button', { name: text.groupEdit, exact: true }), `Edit ${data.group.name}`);
    await checkDialog(pass, page.getByRole('button', { name: text.newGroup }), text.newGroup);
  }
}

/** An authorization request of a freshly registered MCP client for the Chinese service: where the consent page is. */
async function consentUrl(page: Page, data: RealData): Promise<string> {
  const redirect = 'http://127.0.0.1:7777/callback';
  const registered = await page.request.post('/oauth2/register', { data: { client_name: 'Axe Sweep Client', redirect_uris: [redirect] } });
  expect(registered.status()).toBe(201);
  const q = new URLSearchParams({
    response_type: 'code',
    client_id: (await registered.json()).client_id,
    redirect_uri: redirect,
    code_challenge: createHash('sha256').update(randomBytes(32).toString('base64url')).digest('base64url'),
    code_challenge_method: 'S256',
    state: 'axe',
    resource: `${data.url}/proxy/${data.chinese.name}/mcp`,
  });
  return `/oauth2/authorize?${q}`;
}

/**
 * Market → a package's details → Install: the dialog asking for its variable, then the live install log (a real
 * npm install from the fake registry) once complete. The package is uninstalled again, so the other tests of the
 * worker see the services of the real data only.
 */
async function marketInstall(pass: Pass, text: Text): Promise<void> {
  const { page } = pass;
  await page.goto('/market/npm/acme-echo-mcp');
  await settled(page);
  await page.getByRole('button', { name: text.install, exact: true }).first().click();
  const variables = openDialog(page);
  await expect(variables.getByLabel('ACME_ECHO_TOKEN')).toBeVisible();
  await runAxe(pass, 'the Market install dialog', variables);
  await variables.getByLabel('ACME_ECHO_TOKEN').fill('e2e-token');
  await variables.getByRole('button', { name: text.install, exact: true }).click();
  const done = page.getByRole('dialog', { name: text.installed });
  await expect(done).toBeVisible({ timeout: 90_000 });
  await runAxe(pass, 'the install log', done);
  await done.getByRole('button', { name: text.finish, exact: true }).click();
  await expect(done).toBeHidden();
  const token = await accessToken(page.request);
  await uninstallNamed(page.request, token, ['acme-echo-mcp']);
  expect(await serviceNamed(page.request, token, 'acme-echo-mcp')).toBeUndefined();
}

async function prepare(page: Page, lang: Lang, theme: Theme): Promise<void> {
  await page.addInitScript(
    ({ l, t }) => {
      localStorage.setItem('i18nextLng', l);
      localStorage.setItem('theme', t);
    },
    { l: lang, t: theme },
  );
}

/** Fails with every violation found; says how long the test took, and axe in it (in the list reporter's annotations). */
function report(found: string[], axeMs: number[], testInfo: TestInfo, started: number): void {
  const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  const axe = axeMs.reduce((a, b) => a + b, 0);
  testInfo.annotations.push({
    type: 'time',
    description: `${seconds(Date.now() - started)}, of which axe ${seconds(axe)} in ${axeMs.length} runs`,
  });
  console.log(`${testInfo.title}: ${seconds(Date.now() - started)}, axe ${seconds(axe)} in ${axeMs.length} runs`);
  expect(found).toEqual([]);
}

const SCREENS_ADMIN = [
  '/',
  '/market',
  `/market/npm/${LONG_SCOPED_PACKAGE}`,
  '/analytics',
  '/profile',
  '/users',
  '/logs',
  '/audit',
  '/preferences',
  '/docs',
];
const SCREENS_USER = ['/', '/analytics', '/profile', '/market', '/logs', '/docs'];

test.describe('axe-core and phone widths over the console with real data', () => {
  // Spread over the suite's workers; each worker sets up its data once (support/real-data.ts).
  test.describe.configure({ mode: 'parallel', timeout: 300_000 });

  for (const theme of ['light', 'dark'] as const) {
    for (const lang of ['en', 'zh-CN'] as const) {
      const text = TEXT[lang];

      test(`root: every screen and dialog, ${lang}, ${theme}, 1440 and 390 px`, async ({ page, browser, realData }, testInfo) => {
        const started = Date.now();
        await prepare(page, lang, theme);
        const session = await signIn(page);
        expect(session.user.role).toBe(100);
        const found: string[] = [];
        const axeMs: number[] = [];
        for (const width of [1440, 390]) {
          await page.setViewportSize({ width, height: 900 });
          const pass: Pass = { page, width, axe: true, dialogs: width === 1440, found, axeMs, label: `[${width}]` };
          for (const path of SCREENS_ADMIN) {
            await page.goto(path);
            await checkScreen(pass, path);
          }
          await servicesPage(pass, text, realData, true);
          await groupsPage(pass, text, realData, true);

          await page.goto('/users');
          await checkScreen(pass, '/users');
          await checkDialog(pass, page.getByRole('button', { name: text.addUser }), text.addUser);
          await checkDialog(
            pass,
            findUserRow(page, realData.user.username).getByRole('button', { name: text.edit(realData.user.username) }),
            'Edit user',
          );
          if (pass.dialogs) await marketInstall(pass, text);
          await page.goto('/profile');
          await settled(page);
          await checkDialog(pass, page.getByRole('button', { name: text.refreshKey }), text.refreshKey);
          // The navigation of a phone is a sheet: checked where it exists.
          if (width < 768) await checkDialog(pass, page.getByRole('button', { name: text.menu }), 'the navigation sheet', { always: true });
          await page.goto(await consentUrl(page, realData));
          await expect(page).toHaveURL(/\/oauth\/consent\?request=/);
          await checkScreen(pass, '/oauth/consent');
          await page.goto(`/oauth/upstream?result=connected&service=${encodeURIComponent(realData.oauth.display)}`);
          await checkScreen(pass, '/oauth/upstream');

          // Signed out: the sign-in page.
          const context = await browser.newContext({ baseURL: realData.url, viewport: { width, height: 900 } });
          const signedOut = await context.newPage();
          await prepare(signedOut, lang, theme);
          await signedOut.goto('/login');
          await expect(signedOut.getByLabel(text.username)).toBeVisible();
          await checkScreen({ ...pass, page: signedOut }, '/login');
          await context.close();
        }
        report(found, axeMs, testInfo, started);
      });

      test(`a role-1 user under limits: every screen and dialog, ${lang}, ${theme}, 1440 and 390 px`, async ({
        page,
        realData,
      }, testInfo) => {
        const started = Date.now();
        await prepare(page, lang, theme);
        const session = await signIn(page, realData.user.username, realData.user.password);
        expect(session.user.role).toBe(1);
        const found: string[] = [];
        const axeMs: number[] = [];
        for (const width of [1440, 390]) {
          await page.setViewportSize({ width, height: 900 });
          const pass: Pass = { page, width, axe: true, dialogs: width === 1440, found, axeMs, label: `[user ${width}]` };
          for (const path of SCREENS_USER) {
            await page.goto(path);
            await checkScreen(pass, path);
          }
          await servicesPage(pass, text, realData, false);
          await groupsPage(pass, text, realData, false);
        }
        report(found, axeMs, testInfo, started);
      });
    }
  }

  for (const lang of ['en', 'zh-CN'] as const) {
    test(`390 and 360 px, ${lang}: no screen is wider than the phone, every dialog of Services and Groups fits, lists are cards`, async ({
      page,
      browser,
      realData,
    }, testInfo) => {
      const started = Date.now();
      await prepare(page, lang, 'light');
      await signIn(page);
      const found: string[] = [];
      const axeMs: number[] = [];
      for (const width of [390, 360]) {
        await page.setViewportSize({ width, height: 800 });
        const pass: Pass = { page, width, axe: false, dialogs: true, found, axeMs, label: `[${width}]` };
        // At 390 px the sweep above has already checked every screen's width.
        if (width === 360) {
          for (const path of SCREENS_ADMIN) {
            await page.goto(path);
            await checkScreen(pass, path);
          }
        }
        await servicesPage(pass, TEXT[lang], realData, true);
        await groupsPage(pass, TEXT[lang], realData, true);
      }
      // The role-1 user's own dialogs (the read-only Tools dialog among them) at the narrowest width.
      const context = await browser.newContext({ baseURL: realData.url, viewport: { width: 360, height: 800 } });
      const userPage = await context.newPage();
      await prepare(userPage, lang, 'light');
      await signIn(userPage, realData.user.username, realData.user.password);
      const pass: Pass = { page: userPage, width: 360, axe: false, dialogs: true, found, axeMs, label: '[user 360]' };
      await servicesPage(pass, TEXT[lang], realData, false);
      await groupsPage(pass, TEXT[lang], realData, false);
      await context.close();
      report(found, axeMs, testInfo, started);
    });
  }
});
