import { expect, test } from '../support/fixtures';
import { accessToken, everythingCommand, serviceNamed, uninstallNamed } from '../support/services-api';
import { toast } from '../support/toasts';

const NAME = 'e2e-admin-everything';
const TITLE = 'Everything (admin)';
const BATCH_REMOTE = 'e2e-batch-remote';
const BATCH_BAD = 'e2e-batch-bad';

test.describe('services: an admin’s journey', () => {
  // A real stdio install is checked 10 s after it is submitted (docs/console.md §9), then health checks follow.
  test.setTimeout(180_000);

  test.afterAll(async ({ playwright, baseURL }) => {
    const request = await playwright.request.newContext({ baseURL });
    await uninstallNamed(request, await accessToken(request), [NAME, BATCH_REMOTE, BATCH_BAD]);
    await request.dispose();
  });

  test('installs server-everything, edits, toggles and checks it, batch imports, then uninstalls it', async ({
    page,
    request,
    signedIn,
  }) => {
    await page.goto('/services');
    await expect(page.getByRole('heading', { name: 'Services', level: 1 })).toBeVisible();

    await test.step('custom install of a stdio service, followed until it is installed', async () => {
      await page.getByRole('button', { name: 'Add Service' }).click();
      await page.getByRole('menuitem', { name: 'Custom Install' }).click();
      const dialog = page.getByRole('dialog', { name: 'Custom Install' });
      await dialog.getByRole('button', { name: 'Install' }).click();
      await expect(dialog.getByText('Please enter a service name', { exact: true }).last()).toBeVisible();

      await dialog.getByLabel('Name').fill(NAME);
      await dialog.getByLabel('Type').selectOption('stdio');
      await dialog.getByLabel('Command').fill('node server.js');
      await dialog.getByRole('button', { name: 'Install' }).click();
      await expect(dialog.getByText('The command must start with npx or uvx, or be the absolute path of an executable')).toBeVisible();

      await dialog.getByLabel('Command').fill(everythingCommand());
      await dialog.getByLabel('Environment variables').fill('GREETING=hello\nnot a pair');
      await dialog.getByRole('button', { name: 'Install' }).click();
      await expect(dialog.getByRole('status')).toBeVisible();
      await expect(toast(page, 'Installation Submitted')).toBeVisible();
      await expect(dialog).toBeHidden();
      await expect(page.getByRole('group', { name: NAME })).toBeVisible();
      await expect(toast(page, 'Installation Successful')).toBeVisible({ timeout: 40_000 });
      await expect(page.getByRole('group', { name: NAME }).locator('[data-health]').first()).toHaveAttribute('data-health', 'healthy');
    });

    await test.step('edit its display name; the command line is shown read-only', async () => {
      await page.getByRole('button', { name: `Edit ${NAME}` }).click();
      const dialog = page.getByRole('dialog', { name: 'Edit Service' });
      await expect(dialog.getByLabel('Command line')).toHaveValue(everythingCommand());
      // The values are masked until shown (issue 29).
      await expect(dialog.getByLabel('Environment variables')).toHaveValue('GREETING=••••••••');
      await dialog.getByRole('button', { name: 'Show values' }).click();
      await expect(dialog.getByLabel('Environment variables')).toHaveValue('GREETING=hello');
      await expect(dialog.getByLabel('Type')).toBeDisabled();
      await dialog.getByLabel('Display name').fill('');
      await dialog.getByRole('button', { name: 'Save' }).click();
      await expect(dialog.getByText('Display name cannot be empty')).toBeVisible();
      await dialog.getByLabel('Display name').fill(TITLE);
      await dialog.getByRole('button', { name: 'Save' }).click();
      await expect(toast(page, 'Update Successful')).toBeVisible();
      await expect(dialog).toBeHidden();
      await expect(page.getByRole('group', { name: TITLE })).toBeVisible();
    });

    const card = page.getByRole('group', { name: TITLE });
    const toggle = card.getByRole('switch', { name: `Enable ${TITLE}` });

    await test.step('toggle it off and on; enabling checks its health at once', async () => {
      await expect(toggle).toBeChecked();
      await toggle.click();
      await expect(toast(page, 'Service Status Updated')).toBeVisible();
      await expect(toggle).not.toBeChecked();
      expect((await serviceNamed(request, signedIn.token, NAME))?.enabled).toBe(false);
      await page.getByRole('tab', { name: /Inactive/ }).click();
      await expect(page.getByRole('group', { name: TITLE })).toBeVisible();
      await page.getByRole('tab', { name: /All/ }).click();

      await toggle.click();
      await expect(toast(page, `Health Check: ${TITLE} Is Healthy`)).toBeVisible({ timeout: 30_000 });
      await expect(toggle).toBeChecked();
      await expect(toggle).toBeEnabled();
      expect((await serviceNamed(request, signedIn.token, NAME))?.enabled).toBe(true);
    });

    await test.step('check its health on demand', async () => {
      const checked = page.waitForResponse((res) => res.url().endsWith('/health/check') && res.request().method() === 'POST');
      await card.getByRole('button', { name: `Check health of ${TITLE}` }).click();
      expect((await (await checked).json()).data.health_status).toBe('healthy');
      await expect(toast(page, `Health Check: ${TITLE} Is Healthy`)).toBeVisible();
      await expect(card.locator('[data-health]').first()).toHaveAttribute('data-health', 'healthy');
      // The card says why it is green: the tool count and the time the check took.
      await expect(card.getByTestId('health-reason')).toHaveText(/^\d+ tools, answered in \d+ ms$/);
    });

    await test.step('the list view shows the same service with its columns', async () => {
      await page.getByRole('button', { name: 'List view' }).click();
      const row = page.getByTestId('service-row').filter({ hasText: TITLE });
      await expect(row).toContainText(NAME);
      await expect(row).toContainText('Healthy');
      await expect(page.getByRole('columnheader', { name: 'Operations' })).toBeVisible();
      await page.getByRole('button', { name: 'Grid view' }).click();
    });

    await test.step('batch import with live progress and a report', async () => {
      await page.getByRole('button', { name: 'Add Service' }).click();
      await page.getByRole('menuitem', { name: 'Batch Import' }).click();
      const dialog = page.getByRole('dialog', { name: 'Batch Import' });
      const importButton = dialog.getByRole('button', { name: 'Import' });
      await expect(importButton).toBeDisabled();
      await dialog.getByLabel('JSON').fill('{"mcpServers": ');
      await importButton.click();
      await expect(dialog.getByRole('alert')).toContainText('The text is not valid JSON.');

      const doc = {
        mcpServers: {
          [BATCH_REMOTE]: { url: 'http://127.0.0.1:9/mcp' },
          [NAME]: { command: process.execPath, args: ['index.js'] },
          [BATCH_BAD]: { url: 'not a url' },
        },
      };
      await dialog.getByLabel('JSON').fill(JSON.stringify(doc, null, 2));
      await importButton.click();
      await expect(dialog.getByText('Import report')).toBeVisible({ timeout: 30_000 });
      const line = (name: string) => dialog.getByTestId('batch-item').filter({ hasText: name });
      await expect(line(BATCH_REMOTE)).toHaveAttribute('data-status', 'success');
      await expect(line(NAME)).toHaveAttribute('data-status', 'skipped');
      await expect(line(BATCH_BAD)).toHaveAttribute('data-status', 'failed');
      await expect(dialog.getByTestId('batch-count-success')).toHaveText('1');
      await expect(dialog.getByTestId('batch-count-skipped')).toHaveText('1');
      await expect(dialog.getByTestId('batch-count-failed')).toHaveText('1');
      await dialog.getByRole('button', { name: 'Close' }).last().click();
      await expect(page.getByRole('group', { name: BATCH_REMOTE })).toBeVisible();
    });

    await test.step('uninstall after confirming', async () => {
      await card.getByRole('button', { name: `Uninstall ${TITLE}` }).click();
      const confirm = page.getByRole('alertdialog', { name: 'Confirm Uninstallation' });
      await expect(confirm).toContainText(`Are you sure you want to uninstall ${TITLE}?`);
      await confirm.getByRole('button', { name: 'Uninstall' }).click();
      await expect(toast(page, 'Service Uninstalled')).toBeVisible();
      await expect(page.getByRole('group', { name: TITLE })).toBeHidden();
      expect(await serviceNamed(request, signedIn.token, NAME)).toBeUndefined();
    });
  });
});
