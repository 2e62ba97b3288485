import type { Browser, BrowserContext, Page } from '@playwright/test';
import { type FakeClient, type FakeOAuth, type FakeProvider, startFakeOAuth } from '../../apps/server/test/fake-oauth';
import { ADMIN_PASSWORD } from './constants';
import { expect, type Session, signIn } from './fixtures';
import { type RunningServer, startServer } from './server';
import { toast } from './toasts';

/**
 * For specs that change global preferences or sign in through the fake GitHub and Google: a server of
 * their own (so the suite's shared server keeps its defaults), and browser contexts pointed at it.
 */

export interface OAuthRig {
  fake: FakeOAuth;
  server: RunningServer;
  stop(): Promise<void>;
}

/** The fake providers (apps/server/test/fake-oauth.ts) and a server whose provider endpoints point at them. */
export async function startOAuthRig(): Promise<OAuthRig> {
  const fake = await startFakeOAuth();
  try {
    const server = await startServer(ADMIN_PASSWORD, fake.env);
    return { fake, server, stop: async () => void (await Promise.all([server.stop(), fake.close()])) };
  } catch (err) {
    await fake.close();
    throw err;
  }
}

export interface ContextOptions {
  language?: 'en' | 'zh-CN';
  theme?: 'light' | 'dark';
}

/**
 * A fresh browser context on `baseURL` (its own cookies and storage, as a new browser), with the console's
 * language and theme stored before the first page loads. The suite's `use` options do not reach contexts a
 * spec opens itself, so they are repeated here.
 */
export async function consoleContext(browser: Browser, baseURL: string, opts: ContextOptions = {}): Promise<BrowserContext> {
  const context = await browser.newContext({ baseURL, locale: 'en-US', colorScheme: 'light' });
  await context.addInitScript(({ language, theme }) => {
    if (language) localStorage.setItem('i18nextLng', language);
    if (theme) localStorage.setItem('theme', theme);
  }, opts);
  return context;
}

/** A page of a new context on `baseURL`, signed in as root. */
export async function rootPage(browser: Browser, baseURL: string, opts: ContextOptions = {}): Promise<{ page: Page; session: Session }> {
  const context = await consoleContext(browser, baseURL, opts);
  const page = await context.newPage();
  return { page, session: await signIn(page) };
}

const labels: Record<FakeProvider, string> = { github: 'GitHub', google: 'Google' };

/** The card of a sign-in provider on the Preferences screen (English). */
export const providerCard = (page: Page, provider: FakeProvider) => page.getByRole('region', { name: `${labels[provider]} sign-in` });

/** As root on the Preferences screen: the server address, then the provider's client ID and secret, then its switch. */
export async function configureProvider(page: Page, provider: FakeProvider, client: FakeClient, serverAddress: string): Promise<void> {
  await page.goto('/preferences');
  const address = page.getByRole('region', { name: 'Server address' });
  await address.getByRole('textbox', { name: 'Server address' }).fill(`${serverAddress}/`);
  await address.getByRole('button', { name: 'Save' }).click();
  await expect(address.getByRole('status')).toHaveText('Server address saved');

  const card = providerCard(page, provider);
  await expect(card.getByTestId(`${provider}-callback-url`)).toHaveValue(`${serverAddress}/oauth/${provider}`);
  await card.getByLabel('Client ID').fill(client.clientId);
  await card.getByLabel('Client secret').fill(client.clientSecret);
  await card.getByRole('button', { name: 'Save credentials' }).click();
  await expect(toast(page, `${labels[provider]} credentials saved`)).toBeVisible();
  await expect(card.getByLabel('Client secret')).toHaveValue('');

  const enabled = card.getByRole('switch', { name: `Enable ${labels[provider]} sign-in` });
  if ((await enabled.getAttribute('aria-checked')) !== 'true') {
    await enabled.click();
    await expect(toast(page, `${labels[provider]} sign-in enabled`)).toBeVisible();
  }
  await expect(card.getByTestId(`${provider}-readiness`)).toHaveText('On the sign-in page');
}

/** As root in a browser of its own, switches each of `providers` on with the fake's client (Preferences screen). */
export async function setUpProviders(browser: Browser, rig: OAuthRig, providers: FakeProvider[]): Promise<void> {
  const { page } = await rootPage(browser, rig.server.url);
  for (const provider of providers) await configureProvider(page, provider, rig.fake.clients[provider], rig.server.url);
  await page.context().close();
}

/** A page of a new context on the rig's server, signed in through the sign-in form as `username`. */
export async function formSignIn(
  browser: Browser,
  rig: OAuthRig,
  username: string,
  password: string,
  opts: ContextOptions = {},
): Promise<Page> {
  const page = await (await consoleContext(browser, rig.server.url, opts)).newPage();
  await page.goto('/login');
  await page.getByLabel(opts.language === 'zh-CN' ? '用户名' : 'Username').fill(username);
  await page.getByLabel(opts.language === 'zh-CN' ? '密码' : 'Password', { exact: true }).fill(password);
  await page.getByRole('button', { name: opts.language === 'zh-CN' ? '继续' : 'Continue', exact: true }).click();
  await expect(page.getByTestId('current-user')).toBeVisible();
  return page;
}
