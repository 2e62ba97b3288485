import type { Locator, Page } from '@playwright/test';
import { createUser } from '../support/console-users';
import { expect, test } from '../support/fixtures';
import { accessToken, uninstallNamed } from '../support/services-api';
import { toast } from '../support/toasts';
import { findUserRow, searchUsers } from '../support/users-page';

/** Issue 15, items 6 and 7: every screen and dialog at 360 px, and the focus back on what opened a dialog. */

const SERVICE = 'e2e-h8-remote';
/** Port 9 (discard) on loopback: nothing listens, so the service is created at once and stays unhealthy. */
const DEAD_URL = 'http://127.0.0.1:9/mcp';

async function createRemote(page: Page, token: string): Promise<void> {
  const res = await page.request.post('/api/mcp_market/custom_service', {
    headers: { Authorization: `Bearer ${token}` },
    data: { name: SERVICE, type: 'streamableHttp', url: DEAD_URL, command: '', description: '' },
  });
  expect([201, 409], await res.text()).toContain(res.status());
}

/** The page scrolls sideways by this many pixels (0 or less: it does not). */
const pageOverflow = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);

/** Each of `controls` is shown and lies wholly between the left and right edge of a `width` wide screen. */
async function expectOnScreen(controls: Locator, width: number): Promise<void> {
  // all() does not wait: let the page render the first one (the analytics table loads after the heading).
  await expect(controls.first()).toBeVisible();
  const all = await controls.all();
  expect(all.length, 'no control matched').toBeGreaterThan(0);
  for (const control of all) {
    await expect(control).toBeVisible();
    const box = await control.boundingBox();
    const name = (await control.getAttribute('aria-label')) ?? (await control.innerText());
    expect(box, name).not.toBeNull();
    expect(box?.x ?? -1, `${name} starts left of the screen`).toBeGreaterThanOrEqual(0);
    expect((box?.x ?? 0) + (box?.width ?? 0), `${name} ends right of the screen`).toBeLessThanOrEqual(width);
  }
}

/** The open dialog fits the screen, does not scroll sideways itself, and `controls` in it are on screen. */
async function expectDialogFits(page: Page, dialog: Locator, width: number, controls: Locator): Promise<void> {
  await expect(dialog).toBeVisible();
  const box = await dialog.boundingBox();
  expect(box && box.x >= 0 && box.x + box.width <= width, `dialog box ${JSON.stringify(box)}`).toBe(true);
  expect(await dialog.evaluate((el) => el.scrollWidth - el.clientWidth)).toBeLessThanOrEqual(0);
  expect(await pageOverflow(page)).toBeLessThanOrEqual(0);
  await expectOnScreen(controls, width);
}

test.describe('a 360 px phone', () => {
  test.afterAll(async ({ playwright, baseURL }) => {
    const request = await playwright.request.newContext({ baseURL });
    await uninstallNamed(request, await accessToken(request), [SERVICE]);
    await request.dispose();
  });

  for (const width of [360, 390]) {
    test(`no screen scrolls sideways at ${width} px; the Users status switch and actions are on screen`, async ({ page, signedIn }) => {
      test.setTimeout(90_000);
      expect(signedIn.user.role).toBe(100);
      await page.setViewportSize({ width, height: 800 });
      for (const path of ['/', '/services', '/groups', '/market', '/analytics', '/profile', '/users', '/logs', '/preferences']) {
        await page.goto(path);
        await expect(page.getByRole('heading', { level: 1 })).toBeVisible();
        await expect(page.locator('[aria-hidden="true"].animate-pulse')).toHaveCount(0);
        expect(await pageOverflow(page), `${path} is wider than the screen`).toBeLessThanOrEqual(0);
      }

      await page.goto('/users');
      await searchUsers(page, 'root');
      const root = findUserRow(page, 'root');
      await expectOnScreen(root.getByRole('switch', { name: 'Enable root' }), width);
      await expectOnScreen(root.getByRole('button'), width);
      await expectOnScreen(root.getByText('Super admin'), width);

      await page.goto('/analytics');
      await expectOnScreen(page.getByRole('button', { name: /Today's requests/ }), width);
    });
  }

  test('every dialog fits at 360 px with its buttons on screen', async ({ page, signedIn }) => {
    test.setTimeout(120_000);
    await createRemote(page, signedIn.token);
    const width = 360;
    await page.setViewportSize({ width, height: 800 });
    await page.goto('/services');
    const card = page.getByRole('group', { name: SERVICE });

    await card.getByRole('button', { name: 'Configure' }).click();
    let dialog = page.getByRole('dialog', { name: SERVICE });
    await expectDialogFits(page, dialog, width, dialog.getByRole('button', { name: /^Copy/ }).filter({ visible: true }));
    // The six client tabs wrap onto more lines rather than scroll out of sight.
    await expectOnScreen(dialog.getByRole('tab'), width);
    await page.keyboard.press('Escape');

    await card.getByRole('button', { name: `Tools of ${SERVICE}` }).click();
    dialog = page.getByRole('dialog', { name: `Tools of ${SERVICE}` });
    await expectDialogFits(page, dialog, width, dialog.getByRole('button', { name: 'Close' }));
    await page.keyboard.press('Escape');

    await card.getByRole('button', { name: `Edit ${SERVICE}` }).click();
    dialog = page.getByRole('dialog', { name: 'Edit Service' });
    await expectDialogFits(page, dialog, width, dialog.getByRole('button', { name: /^(Save|Cancel)$/ }));
    await page.keyboard.press('Escape');

    for (const [item, title, buttons] of [
      ['Custom Install', 'Custom Install', /^(Install|Cancel)$/],
      ['Batch Import', 'Batch Import', /^Import/],
    ] as const) {
      await page.getByRole('button', { name: 'Add Service' }).click();
      await page.getByRole('menuitem', { name: item }).click();
      dialog = page.getByRole('dialog', { name: title });
      await expectDialogFits(page, dialog, width, dialog.getByRole('button', { name: buttons }));
      await page.keyboard.press('Escape');
    }

    await page.goto('/groups');
    await page.getByRole('button', { name: 'New group' }).click();
    dialog = page.getByRole('dialog', { name: 'New group' });
    await expectDialogFits(page, dialog, width, dialog.getByRole('button', { name: /^(Create|Cancel)$/ }));
    await page.keyboard.press('Escape');

    await page.goto('/users');
    await page.getByRole('button', { name: 'Add user' }).click();
    dialog = page.getByRole('dialog', { name: 'Add user' });
    await expectDialogFits(page, dialog, width, dialog.getByRole('button', { name: /^(Create|Cancel)$/ }));
    await page.keyboard.press('Escape');

    await page.goto('/profile');
    await page.getByRole('button', { name: 'Refresh key' }).click();
    dialog = page.getByRole('alertdialog');
    await expectDialogFits(page, dialog, width, dialog.getByRole('button'));
  });
});

/**
 * Opens a dialog with the keyboard (focus on the trigger, Enter), closes it with Escape, then again with
 * `closeWith` (Cancel or Close): each time the focus is back on `expected` (the trigger, or the menu button
 * whose item opened it).
 */
async function expectFocusReturns(
  page: Page,
  open: () => Promise<void>,
  dialog: Locator,
  closeWith: string,
  expected: Locator,
): Promise<void> {
  for (const close of ['Escape', closeWith]) {
    await open();
    await expect(dialog).toBeVisible();
    if (close === 'Escape') await page.keyboard.press('Escape');
    else await dialog.getByRole('button', { name: close, exact: true }).first().click();
    await expect(dialog).toBeHidden();
    await expect(expected, `focus after ${close}`).toBeFocused();
  }
}

const pressOn = (page: Page, trigger: Locator) => async () => {
  await trigger.focus();
  await page.keyboard.press('Enter');
};

test.describe('focus returns to what opened a dialog', () => {
  test.afterAll(async ({ playwright, baseURL }) => {
    const request = await playwright.request.newContext({ baseURL });
    await uninstallNamed(request, await accessToken(request), [SERVICE]);
    await request.dispose();
  });

  test('services and groups: Configure, Tools, Edit, Uninstall, and Custom Install and Batch Import from the menu', async ({
    page,
    signedIn,
  }) => {
    test.setTimeout(120_000);
    await createRemote(page, signedIn.token);
    await page.goto('/services');
    const card = page.getByRole('group', { name: SERVICE });
    await expect(card).toBeVisible();

    for (const [trigger, dialog, closeWith] of [
      [card.getByRole('button', { name: 'Configure' }), page.getByRole('dialog', { name: SERVICE }), 'Close'],
      [card.getByRole('button', { name: `Tools of ${SERVICE}` }), page.getByRole('dialog', { name: `Tools of ${SERVICE}` }), 'Close'],
      [card.getByRole('button', { name: `Edit ${SERVICE}` }), page.getByRole('dialog', { name: 'Edit Service' }), 'Cancel'],
      [card.getByRole('button', { name: `Uninstall ${SERVICE}` }), page.getByRole('alertdialog'), 'Cancel'],
    ] as const) {
      await expectFocusReturns(page, pressOn(page, trigger), dialog, closeWith, trigger);
    }

    // A menu item opens these: the item is gone when the dialog closes, so the focus goes to the menu's button.
    const menu = page.getByRole('button', { name: 'Add Service' });
    for (const [item, closeWith] of [
      ['Custom Install', 'Cancel'],
      ['Batch Import', 'Close'],
    ] as const) {
      const openFromMenu = async () => {
        await menu.focus();
        await page.keyboard.press('Enter');
        await expect(page.getByRole('menuitem', { name: item }))
          .toBeFocused({ timeout: 5_000 })
          .catch(() => {});
        await page.getByRole('menuitem', { name: item }).focus();
        await page.keyboard.press('Enter');
      };
      await expectFocusReturns(page, openFromMenu, page.getByRole('dialog', { name: item }), closeWith, menu);
    }

    await page.goto('/groups');
    const newGroup = page.getByRole('button', { name: 'New group' });
    await expectFocusReturns(page, pressOn(page, newGroup), page.getByRole('dialog', { name: 'New group' }), 'Cancel', newGroup);
  });

  test('users: Add, Edit, Delete and the disable confirmation; profile: Refresh key; the sample configuration', async ({
    page,
    request,
    signedIn,
  }) => {
    test.setTimeout(90_000);
    expect(signedIn.user.role).toBe(100);
    const target = await createUser(request, 'focus');
    await page.goto('/users');
    await searchUsers(page, target.username);
    const row = findUserRow(page, target.username);

    const add = page.getByRole('button', { name: 'Add user' });
    await expectFocusReturns(page, pressOn(page, add), page.getByRole('dialog', { name: 'Add user' }), 'Cancel', add);
    const edit = row.getByRole('button', { name: `Edit ${target.username}` });
    await expectFocusReturns(page, pressOn(page, edit), page.getByRole('dialog', { name: 'Edit user' }), 'Cancel', edit);
    const remove = row.getByRole('button', { name: `Delete ${target.username}` });
    await expectFocusReturns(page, pressOn(page, remove), page.getByRole('alertdialog', { name: 'Delete user' }), 'Cancel', remove);
    const promote = row.getByRole('button', { name: `Promote ${target.username} to administrator` });
    await expectFocusReturns(
      page,
      pressOn(page, promote),
      page.getByRole('alertdialog', { name: 'Promote to administrator?' }),
      'Cancel',
      promote,
    );
    const status = row.getByRole('switch', { name: `Enable ${target.username}` });
    const toggle = async () => {
      await status.focus();
      await page.keyboard.press('Space');
    };
    await expectFocusReturns(page, toggle, page.getByRole('alertdialog', { name: 'Disable this user?' }), 'Cancel', status);
    await expect(status).toBeChecked();

    // Confirmed: the switch is busy while the server disables the user, then has the focus again.
    await toggle();
    await page.getByRole('alertdialog', { name: 'Disable this user?' }).getByRole('button', { name: 'Disable' }).click();
    await expect(toast(page, 'User disabled')).toBeVisible();
    await expect(status).not.toBeChecked();
    await expect(status).toBeFocused();

    await page.goto('/profile');
    const refresh = page.getByRole('button', { name: 'Refresh key' });
    await expectFocusReturns(page, pressOn(page, refresh), page.getByRole('alertdialog'), 'Cancel', refresh);
    const sample = page.getByRole('button', { name: 'Sample configuration' });
    await expectFocusReturns(page, pressOn(page, sample), page.getByRole('dialog'), 'Close', sample);
  });

  for (const lang of ['en', 'zh-CN'] as const) {
    const text =
      lang === 'en'
        ? { username: 'Username', password: 'Password', go: 'Continue', failed: 'Sign-in failed', empty: 'Invalid input' }
        : { username: '用户名', password: '密码', go: '继续', failed: '登录失败', empty: '输入错误' };

    test(`a failed sign-in leaves the focus on the field to correct (${lang})`, async ({ page, request }) => {
      const user = await createUser(request, 'focusfail');
      if (lang === 'zh-CN') await page.addInitScript(() => localStorage.setItem('i18nextLng', 'zh-CN'));
      await page.goto('/login');
      const username = page.getByLabel(text.username);
      const password = page.getByLabel(text.password, { exact: true });

      await page.getByRole('button', { name: text.go, exact: true }).click();
      await expect(toast(page, text.empty)).toBeVisible();
      await expect(username).toBeFocused();
      await expect(username).toHaveAttribute('aria-invalid', 'true');

      await username.fill(user.username);
      await password.fill('not-the-password');
      await page.keyboard.press('Enter');
      await expect(toast(page, text.failed)).toBeVisible();
      await expect(password).toBeFocused();
      await expect(password).toHaveAttribute('aria-invalid', 'true');
      expect(await page.evaluate(() => document.activeElement === document.body)).toBe(false);

      // Typed again, the right password signs in from the keyboard.
      await page.keyboard.type(user.password);
      await page.keyboard.press('Enter');
      await expect(page).toHaveURL(/\/$/);
    });
  }
});

test('the confirmation before Promote, in Chinese: cancelled, nothing changes', async ({ page, request, signedIn }) => {
  expect(signedIn.user.role).toBe(100);
  const target = await createUser(request, 'zhconfirm');
  await page.addInitScript(() => localStorage.setItem('i18nextLng', 'zh-CN'));
  await page.goto('/users');
  await searchUsers(page, target.username, '搜索用户');
  const row = findUserRow(page, target.username);
  await row.getByRole('button', { name: `将 ${target.username} 提升为管理员` }).click();
  const ask = page.getByRole('alertdialog', { name: '提升为管理员？' });
  await expect(ask).toContainText('将可以查看和修改所有服务、用户、日志和设置。');
  await ask.getByRole('button', { name: '取消' }).click();
  await expect(ask).toBeHidden();
  await expect(row.getByText('普通用户')).toBeVisible();
});
