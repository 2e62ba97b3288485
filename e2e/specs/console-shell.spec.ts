import { expect, test } from '../support/fixtures';

test.describe('the console is served by the server', () => {
  test('a signed-out visitor lands on the sign-in page', async ({ page }) => {
    await page.goto('/');
    await expect(page).toHaveURL(/\/login$/);
    // Each screen names itself in the tab once it is shown.
    await expect(page).toHaveTitle('Sign in to Toolport');
    await expect(page.getByRole('link', { name: 'Toolport' })).toBeVisible();
    await expect(page.getByRole('heading', { name: 'Sign in to Toolport' })).toBeVisible();
  });

  test('signed in, the home page is the dashboard', async ({ page, signedIn }) => {
    await page.goto('/');
    await expect(page.getByRole('heading', { name: 'Dashboard', level: 1 })).toBeVisible();
    await expect(page.getByTestId('current-user')).toHaveText(signedIn.user.display_name || signedIn.user.username);
  });

  test('a deep link loads the console, which shows the matching page', async ({ page, signedIn }) => {
    expect(signedIn.user.role).toBe(100);
    const dashboard = await page.goto('/dashboard');
    expect(dashboard?.status()).toBe(200);
    await expect(page.getByRole('heading', { name: 'Dashboard', level: 1 })).toBeVisible();

    const unknown = await page.goto('/services/42/not-a-page?tab=1');
    expect(unknown?.status()).toBe(200);
    expect(unknown?.headers()['content-type']).toContain('text/html');
    await expect(page.getByRole('heading', { name: 'Page not found' })).toBeVisible();
    await page.getByRole('link', { name: 'Back to the dashboard' }).click();
    await expect(page).toHaveURL(/\/$/);
    await expect(page.getByRole('heading', { name: 'Dashboard', level: 1 })).toBeVisible();
  });

  test('the Docs link opens the documentation, which leads on to the API documentation', async ({ page, request, signedIn }) => {
    expect(signedIn.token).toBeTruthy();
    await page.goto('/');
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Docs' }).click();
    await expect(page).toHaveURL(/\/docs$/);
    await expect(page.getByRole('heading', { name: 'Documentation', level: 1 })).toBeVisible();
    const docsPage = page.waitForResponse(
      (res) => res.request().isNavigationRequest() && new URL(res.url()).pathname.startsWith('/api/docs'),
    );
    await page.getByRole('navigation', { name: 'Documentation pages' }).getByRole('link', { name: 'API reference' }).click();
    const res = await docsPage;
    expect(res.status()).toBe(200);
    expect(res.headers()['content-type']).toContain('text/html');

    const openapi = await request.get('/api/docs/json');
    expect((await openapi.json()).info.title).toBe('Toolport API');
  });
});

test.describe('paths the console does not own', () => {
  test('an unknown /api path answers a JSON 404, not the page, even to a browser', async ({ page, request }) => {
    const navigation = await page.goto('/api/no-such-route');
    expect(navigation?.status()).toBe(404);
    expect(navigation?.headers()['content-type']).toContain('application/json');

    const res = await request.get('/api/no-such-route/deeper', { headers: { accept: 'text/html' } });
    expect(res.status()).toBe(404);
    const body = await res.json();
    expect(body.success).toBe(false);
    expect(body.message).toContain('/api/no-such-route/deeper');
  });

  test('translation files are served as JSON, and a missing one is a 404', async ({ request }) => {
    const en = await request.get('/locales/en/common.json');
    expect(en.status()).toBe(200);
    expect((await en.json()).productName).toBe('Toolport');

    const missing = await request.get('/locales/xx/nothing.json');
    expect(missing.status()).toBe(404);
    expect(missing.headers()['content-type']).toContain('application/json');
  });
});
