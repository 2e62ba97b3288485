import type { Locator, Page } from '@playwright/test';
import { collectConsoleErrors } from '../support/console-checks';
import { expect, test } from '../support/market-server';
import { accessToken, serviceNamed } from '../support/services-api';
import { toast } from '../support/toasts';

const ECHO = 'acme-echo-mcp';

async function search(page: Page, tab: string, term: string): Promise<void> {
  await page.getByRole('tab', { name: tab, exact: true }).click();
  // The tab's search box is drawn anew once the address names the tab (it starts from the address's term): typed
  // into before that, the old box would take the term and the new one search the previous term.
  await expect(page.getByRole('tab', { name: tab, exact: true, selected: true })).toBeVisible();
  const box = page.getByRole('searchbox', { name: 'Search packages' });
  await box.fill(term);
  await expect(box).toHaveValue(term);
  await box.press('Enter');
  await expect(page).toHaveURL(new RegExp(`[?&]q=${encodeURIComponent(term)}(&|$)`));
}

const card = (page: Page, name: string): Locator => page.getByRole('group', { name, exact: true });

test.describe('marketplace against the real server and local registries', () => {
  test.setTimeout(120_000);

  test('searches npm, PyPI and the MCP Registry, each card with its fields', async ({ page, signedIn, marketServer }) => {
    expect(signedIn.user.role).toBeGreaterThanOrEqual(10);
    const consoleErrors = collectConsoleErrors(page);
    await page.goto('/market');
    await expect(page.getByRole('tab', { name: 'npm', selected: true })).toBeVisible();
    // Before any search: the hint, not "No services found" (issue 15, item 3).
    await expect(page.getByText('Type a name or a topic and press Enter to search.')).toBeVisible();
    await expect(page.getByText('No services found')).toHaveCount(0);

    await search(page, 'npm', 'echo');
    const echo = card(page, ECHO);
    await expect(echo).toBeVisible();
    await expect(echo.getByRole('link', { name: ECHO, exact: true })).toHaveAttribute('href', `https://www.npmjs.com/package/${ECHO}`);
    await expect(echo.getByTestId('card-version')).toHaveText('1.0.0');
    await expect(echo).toContainText('Echo tools for MCP clients, guarded by an access token');
    await expect(echo.getByTestId('card-stars')).toHaveText('12 stars');
    await expect(echo.getByTestId('card-downloads')).toHaveText('321 downloads a week');
    await expect(echo.getByTestId('card-author')).toHaveText('Acme Tools');
    await expect(echo.getByRole('link', { name: 'Homepage' })).toHaveAttribute('href', 'https://github.com/acme/echo-mcp#readme');
    expect(marketServer.fake.count('npm', '/-/v1/search')).toBeGreaterThan(0);

    await search(page, 'PyPI', 'notes');
    const notes = card(page, 'acme-notes-mcp');
    await expect(notes).toBeVisible();
    await expect(notes.getByRole('link', { name: 'acme-notes-mcp', exact: true })).toHaveAttribute(
      'href',
      'https://pypi.org/project/acme-notes-mcp/',
    );
    await expect(notes.getByText('PyPI', { exact: true })).toBeVisible();

    await search(page, 'MCP Registry', 'weather');
    const weather = card(page, 'io.github.acme/weather');
    await expect(weather).toBeVisible();
    await expect(weather.getByText('MCP Registry', { exact: true })).toBeVisible();
    expect(marketServer.fake.count('mcp', '/v0.1/servers')).toBeGreaterThan(0);

    await search(page, 'npm', 'no-such-package-anywhere');
    await expect(page.getByText('No services found')).toBeVisible();
    expect(consoleErrors).toEqual([]);
  });

  test('opens the details of a package with its real readme, and comes back to the same results', async ({ page, signedIn }) => {
    expect(signedIn.user.role).toBeGreaterThanOrEqual(10);
    await page.goto('/market?source=npm&q=github');
    const github = card(page, '@modelcontextprotocol/server-github');
    await github.getByRole('link', { name: 'Details of @modelcontextprotocol/server-github' }).click();

    await expect(page).toHaveURL(/\/market\/npm\/(%40|@)modelcontextprotocol\/server-github$/);
    const title = page.getByRole('heading', { level: 1, name: '@modelcontextprotocol/server-github' });
    await expect(title).toBeVisible();
    await expect(title.getByRole('link')).toHaveAttribute('href', 'https://www.npmjs.com/package/@modelcontextprotocol/server-github');
    await expect(page.getByTestId('details-stats')).toContainText('Anthropic, PBC');
    const readme = page.getByTestId('readme');
    await expect(readme.getByRole('heading', { name: 'GitHub MCP Server' })).toBeVisible();
    await expect(readme.getByRole('heading', { name: 'Search Query Syntax' })).toBeVisible();
    await expect(readme.getByRole('link', { name: "GitHub's searching documentation" })).toHaveAttribute(
      'href',
      'https://docs.github.com/en/search-github/searching-on-github',
    );

    await page.getByRole('link', { name: 'Back to the market' }).click();
    await expect(page).toHaveURL(/\/market\?source=npm&q=github$/);
    await expect(github).toBeVisible();

    await page.goto('/market/npm/no-such-package-anywhere');
    await expect(page.getByRole('heading', { name: 'Service Not Found' })).toBeVisible();
  });

  test('installs with the missing variable and the live log, then uninstalls from the detail view', async ({
    page,
    request,
    signedIn,
    marketServer,
  }) => {
    expect(signedIn.user.role).toBeGreaterThanOrEqual(10);
    const consoleErrors = collectConsoleErrors(page);
    await page.goto(`/market?source=npm&q=echo`);
    const echo = card(page, ECHO);
    await echo.getByRole('button', { name: 'Install' }).click();

    // The search result does not list variables: the server names the missing one.
    const modal = page.getByRole('dialog', { name: 'Environment variables required' });
    await expect(modal).toBeVisible();
    await modal.getByRole('button', { name: 'Install' }).click();
    await expect(modal.getByRole('alert')).toHaveText('Please enter a value for ACME_ECHO_TOKEN.');
    await modal.getByLabel('ACME_ECHO_TOKEN').fill('e2e-token');
    await modal.getByRole('button', { name: 'Install' }).click();

    const log = page.getByRole('log', { name: 'Installation log' });
    await expect(log).toContainText('Installation initiated...');
    await expect(page.getByRole('dialog', { name: 'Installing Service...' }).getByRole('button', { name: 'Close' })).toBeDisabled();
    await expect(log).toContainText(`$ npm install --prefix`, { timeout: 30_000 });
    const done = page.getByRole('dialog', { name: 'Installation Complete' });
    await expect(done).toBeVisible({ timeout: 90_000 });
    await expect(log).toContainText('Handshake complete: 2 tools.');
    await expect(toast(page, 'Installation Complete')).toBeVisible();
    // npm installed from the fake registry (its tarball may come from npm's cache after the first run).
    await expect(log).toContainText(`--registry ${marketServer.fake.urls.npm} ${ECHO}@1.0.0`);
    await done.getByRole('button', { name: 'Finish' }).click();
    await expect(echo.getByRole('button', { name: 'Uninstall' })).toBeVisible();

    const token = await accessToken(request);
    const service = await serviceNamed(request, token, ECHO);
    expect(service).toMatchObject({ enabled: true });

    await page.getByRole('tab', { name: 'Installed' }).click();
    await expect(card(page, ECHO)).toBeVisible();
    await card(page, ECHO)
      .getByRole('link', { name: `Details of ${ECHO}` })
      .click();
    await expect(page.getByRole('heading', { level: 1, name: ECHO })).toBeVisible();
    // The readme's javascript: link is blanked: its text stays, as no link.
    const readme = page.getByTestId('readme');
    await expect(readme.getByRole('link', { name: 'Model Context Protocol' })).toHaveAttribute('href', 'https://modelcontextprotocol.io');
    await expect(readme.getByText('run this')).toBeVisible();
    await expect(readme.getByRole('link', { name: 'run this' })).toHaveCount(0);

    await page.getByRole('button', { name: 'Uninstall' }).click();
    const confirm = page.getByRole('alertdialog', { name: 'Confirm Uninstallation' });
    await expect(confirm).toContainText(`Are you sure you want to uninstall ${ECHO}?`);
    await confirm.getByRole('button', { name: 'Uninstall' }).click();
    await expect(toast(page, 'Service Uninstalled')).toBeVisible();
    await expect(page.getByRole('button', { name: 'Install' })).toBeVisible();
    expect(await serviceNamed(request, token, ECHO)).toBeUndefined();

    // The detail view knows the variable from the readme: it asks before anything is sent.
    await page.getByRole('button', { name: 'Install' }).click();
    await expect(page.getByRole('dialog', { name: 'Environment variables required' }).getByLabel('ACME_ECHO_TOKEN')).toBeVisible();
    await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
    await expect(page.getByRole('dialog')).toHaveCount(0);
    await expect(page.getByRole('button', { name: 'Install' })).toBeEnabled();
    // The only failed request is the expected one: the server's 400 naming the missing variable.
    expect(consoleErrors).toEqual(['Failed to load resource: the server responded with a status of 400 (Bad Request)']);
  });
});
