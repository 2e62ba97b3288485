import type { Page } from '@playwright/test';
import { collectConsoleErrors, expectNoRawKeys } from '../support/console-checks';
import { createUser } from '../support/console-users';
import { expect, signIn, test } from '../support/fixtures';
import { toast } from '../support/toasts';
import { findUserRow, searchUsers, uniqueUsername } from '../support/users-page';
import { expectChineseOnly } from '../support/zh-text-check';

test.describe('users screen against the real server', () => {
  test('root creates a user, promotes and disables them (their session ends at their next call), then deletes them', async ({
    page,
    browser,
    baseURL,
    request,
    signedIn,
  }) => {
    expect(signedIn.user.role).toBe(100);
    const username = uniqueUsername('life');
    const password = 'life-password-1';
    await page.goto('/users');
    await expect(page.getByRole('heading', { name: 'Users', level: 1 })).toBeVisible();
    await expect(page.getByTestId('users-count')).toHaveText(/^Showing \d+ users?$/);

    // Add: the dialog checks the fields first, then the real server creates the user.
    await page.getByRole('button', { name: 'Add user' }).click();
    const dialog = page.getByRole('dialog', { name: 'Add user' });
    await dialog.getByLabel('Username').fill(username);
    await dialog.getByLabel('Display name').fill('Life Cycle');
    await dialog.getByLabel('Password', { exact: true }).fill('short');
    await dialog.getByRole('button', { name: 'Create' }).click();
    await expect(dialog.getByText('The password must have at least 8 characters')).toBeVisible();
    await dialog.getByLabel('Password', { exact: true }).fill(password);
    await dialog.getByRole('button', { name: 'Create' }).click();
    await expect(toast(page, 'User created')).toBeVisible();
    await expect(dialog).toBeHidden();

    await searchUsers(page, username);
    const row = findUserRow(page, username);
    await expect(row.getByText('User', { exact: true })).toBeVisible();
    await expect(row.getByText('Life Cycle')).toBeVisible();
    await expect(page.getByTestId('users-count')).toHaveText('Showing 1 user');

    // Promote: the badge and the offered action follow.
    await row.getByRole('button', { name: `Promote ${username} to administrator` }).click();
    await page.getByRole('alertdialog', { name: 'Promote to administrator?' }).getByRole('button', { name: 'Promote' }).click();
    await expect(toast(page, 'Promoted to administrator')).toBeVisible();
    await expect(row.getByText('Admin', { exact: true })).toBeVisible();
    await expect(row.getByRole('button', { name: `Demote ${username} to user` })).toBeVisible();

    // The new admin signs in in another browser.
    const other = await browser.newContext({ baseURL });
    const theirs = await other.newPage();
    await signIn(theirs, username, password);
    await theirs.goto('/dashboard');
    await expect(theirs.getByRole('heading', { name: 'Dashboard', level: 1 })).toBeVisible();
    await expect(theirs.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Users' })).toBeVisible();

    // Disable: their very next call is refused, the refresh too, and they are back at the sign-in page.
    const status = row.getByRole('switch', { name: `Enable ${username}` });
    await expect(status).toBeChecked();
    await status.click();
    const ask = page.getByRole('alertdialog', { name: 'Disable this user?' });
    await ask.getByRole('button', { name: 'Disable' }).click();
    await expect(ask).toBeHidden();
    await expect(toast(page, 'User disabled')).toBeVisible();
    await expect(status).not.toBeChecked();
    await expect(row.getByText('Disabled', { exact: true })).toBeVisible();

    // Their next call meets it: the click's, or one their console made of its own accord first (the dashboard's own
    // calls, late on a busy machine), which already leads to sign-in and takes the link away.
    await theirs
      .getByRole('navigation', { name: 'Sections' })
      .getByRole('link', { name: 'Analytics' })
      .click({ timeout: 10_000 })
      .catch(() => undefined);
    await expect(theirs).toHaveURL(/\/login$/);
    expect(await theirs.evaluate(() => [localStorage.getItem('token'), localStorage.getItem('user')])).toEqual([null, null]);
    const refused = await request.post('/api/auth/login', { data: { username, password } });
    expect(refused.status()).toBe(403);
    await other.close();

    // Delete, after the confirmation.
    await row.getByRole('button', { name: `Delete ${username}` }).click();
    const confirm = page.getByRole('alertdialog', { name: 'Delete user' });
    await expect(confirm).toContainText('Are you sure you want to delete Life Cycle? This action cannot be undone.');
    await confirm.getByRole('button', { name: 'Delete' }).click();
    await expect(toast(page, 'User deleted')).toBeVisible();
    await expect(page.getByText(`No users match “${username}”`)).toBeVisible();
    const gone = await request.get(`/api/user/search?keyword=${username}`, { headers: { Authorization: `Bearer ${signedIn.token}` } });
    expect((await gone.json()).data).toEqual([]);
  });

  test('edits a user with the username fixed; a taken username is refused with the server’s message', async ({
    page,
    request,
    signedIn,
  }) => {
    expect(signedIn.user.role).toBe(100);
    const existing = await createUser(request, 'edit');
    await page.goto('/users');
    await searchUsers(page, existing.username);
    const row = findUserRow(page, existing.username);
    await row.getByRole('button', { name: `Edit ${existing.username}` }).click();
    const edit = page.getByRole('dialog', { name: 'Edit user' });
    await expect(edit.getByLabel('Username')).toHaveValue(existing.username);
    await expect(edit.getByLabel('Username')).toHaveAttribute('readonly', '');
    await edit.getByLabel('Display name').fill('Renamed By Root');
    await edit.getByLabel('Email').fill('renamed@example.com');
    await edit.getByRole('button', { name: 'Save' }).click();
    await expect(toast(page, 'User updated')).toBeVisible();
    await expect(row.getByText('Renamed By Root')).toBeVisible();
    await expect(row.getByText('renamed@example.com')).toBeVisible();
    // No password was entered, so the old one still works.
    expect((await request.post('/api/auth/login', { data: existing })).status()).toBe(200);

    await page.getByRole('button', { name: 'Add user' }).click();
    const add = page.getByRole('dialog', { name: 'Add user' });
    await add.getByLabel('Username').fill(existing.username);
    await add.getByLabel('Password', { exact: true }).fill('another-password');
    await add.getByRole('button', { name: 'Create' }).click();
    await expect(toast(page, 'Could not create the user')).toBeVisible();
    await expect(toast(page, `The username "${existing.username}" is already taken`)).toBeVisible();
    await expect(add).toBeVisible();
  });

  test('an admin is offered no role changes and nothing on the super admin', async ({ page, request }) => {
    const admin = await createUser(request, 'adm', 10);
    await signIn(page, admin.username, admin.password);
    await page.goto('/users');
    await searchUsers(page, 'root');
    const root = findUserRow(page, 'root');
    await expect(root.getByText('Super admin')).toBeVisible();
    await expect(root.getByRole('button')).toHaveCount(0);
    await expect(root.getByRole('switch')).toBeDisabled();

    await searchUsers(page, admin.username);
    const self = findUserRow(page, admin.username);
    await expect(self.getByText('You', { exact: true })).toBeVisible();
    // Their own row: Edit, and their connected apps (OAuth grants of MCP clients); no role change.
    await expect(self.getByRole('button')).toHaveCount(2);
    await expect(self.getByRole('button', { name: `Edit ${admin.username}` })).toBeVisible();
    await expect(self.getByRole('button', { name: `Connected apps of ${admin.username}` })).toBeVisible();
    await expect(self.getByRole('switch')).toBeDisabled();
  });
});

const NAMESPACES = ['common', 'users'];
/** Names that stay as they are in Chinese text. */
const ALLOWED = ['Toolport', 'GitHub', 'Google', 'ID'];

async function expectTranslated(page: Page): Promise<void> {
  await expectChineseOnly(page, NAMESPACES, ALLOWED);
  await expectNoRawKeys(page);
}

test.describe('users screen in Chinese, dark, and on a small screen', () => {
  test('table, dialogs and confirmation show no raw key and no English sentence', async ({ page, request, signedIn }) => {
    expect(signedIn.user.role).toBe(100);
    const target = await createUser(request, 'zh');
    const errors = collectConsoleErrors(page);
    await page.addInitScript(() => {
      localStorage.setItem('i18nextLng', 'zh-CN');
      localStorage.setItem('theme', 'dark');
    });
    await page.goto('/users');
    await expect(page.getByRole('heading', { name: '用户', level: 1 })).toBeVisible();
    await expect(page.locator('html')).toHaveClass(/dark/);
    await searchUsers(page, target.username, '搜索用户');
    const row = findUserRow(page, target.username);
    await expect(row.getByText('普通用户')).toBeVisible();
    await expect(page.getByTestId('users-count')).toHaveText('显示 1 个用户');
    await expectTranslated(page);

    await page.getByRole('button', { name: '添加用户' }).click();
    const add = page.getByRole('dialog', { name: '添加用户' });
    await add.getByRole('button', { name: '创建' }).click();
    await expect(add.getByText('用户名不能为空')).toBeVisible();
    await expect(add.getByText('密码不能为空')).toBeVisible();
    await expectTranslated(page);
    await page.keyboard.press('Escape');
    await expect(add).toBeHidden();

    await row.getByRole('button', { name: `编辑 ${target.username}` }).click();
    await expect(page.getByRole('dialog', { name: '编辑用户' })).toBeVisible();
    await expectTranslated(page);
    await page.keyboard.press('Escape');

    await row.getByRole('button', { name: `删除 ${target.username}` }).click();
    await expect(page.getByRole('alertdialog', { name: '删除用户' })).toBeVisible();
    await expectTranslated(page);
    await page.getByRole('alertdialog').getByRole('button', { name: '取消' }).click();

    await row.getByRole('switch').click();
    const ask = page.getByRole('alertdialog', { name: '禁用此用户？' });
    await expect(ask).toBeVisible();
    await expectTranslated(page);
    await ask.getByRole('button', { name: '禁用' }).click();
    await expect(toast(page, '用户已禁用')).toBeVisible();
    await expectTranslated(page);
    expect(errors).toEqual([]);
  });

  test('fits a 375 px wide screen without sideways scrolling', async ({ page, signedIn }) => {
    expect(signedIn.user.role).toBe(100);
    await page.setViewportSize({ width: 375, height: 800 });
    const overflow = () => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    await page.goto('/users');
    await expect(page.getByTestId('user-row').first()).toBeVisible();
    expect(await overflow()).toBeLessThanOrEqual(0);
    await page.getByRole('button', { name: 'Add user' }).click();
    const dialog = page.getByRole('dialog', { name: 'Add user' });
    await expect(dialog).toBeVisible();
    const box = await dialog.boundingBox();
    expect(box && box.x >= 0 && box.x + box.width <= 375).toBe(true);
    expect(await overflow()).toBeLessThanOrEqual(0);
  });
});
