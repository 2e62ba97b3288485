import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import type { OptionEntry, OptionKey } from '@toolport/contract';
import { describe, expect, it } from 'vitest';
import { type FakeReply, type FakeRequest, fail, fakeApi, ok, selfUser, storeSession } from '../../test/fake-api';
import { renderApp } from '../../test/render';

type Routes = Parameters<typeof fakeApi>[0];
type Values = Partial<Record<OptionKey, string>>;

const defaults: Values = {
  ServerAddress: '',
  GitHubClientId: '',
  GitHubClientSecret: '',
  GoogleClientId: '',
  GoogleClientSecret: '',
  GitHubOAuthEnabled: 'false',
  GoogleOAuthEnabled: 'false',
  StdioServiceStartupStrategy: 'boot',
  AllowPrivateNetworkUpstreams: 'true',
  AllowedOrigins: '',
};

const entries = (values: Values): OptionEntry[] =>
  Object.entries({ ...defaults, ...values }).map(([key, value]) => ({ key: key as OptionKey, value: value ?? '' }));

/** A fake GET/PUT /api/option/ that remembers what was saved (secrets read back masked, as on the server). */
function optionRoutes(initial: Values, refuse?: (req: FakeRequest) => FakeReply | undefined): Routes {
  const values: Values = { ...defaults, ...initial };
  return {
    'GET /api/option/': () => ok(entries(values)),
    'PUT /api/option/': (req) => {
      const refusal = refuse?.(req);
      if (refusal) return refusal;
      const { key, value } = req.body as { key: OptionKey; value: string };
      values[key] = key.endsWith('Secret') && value ? '********' : value;
      return ok(undefined, 'Preference saved');
    },
  };
}

const root = { id: 1, role: 100, username: 'root' };

async function openPreferences(initial: Values = {}, routes: Routes = {}, language = 'en') {
  localStorage.setItem('i18nextLng', language);
  storeSession(root);
  const server = fakeApi({ 'GET /api/user/self': () => ok(selfUser(root)), ...optionRoutes(initial), ...routes });
  const app = await renderApp('/preferences');
  await screen.findByRole('heading', { name: language === 'en' ? 'Preferences' : '偏好设置', level: 1 });
  return { server, user: userEvent.setup(), ...app };
}

const puts = (server: ReturnType<typeof fakeApi>) => server.callsTo('PUT', '/api/option/').map((c) => c.body);
const card = (title: string) => screen.getByRole('region', { name: title });
/** Waits for a toast showing `title` and `description` (a replaced one may still be fading out beside it). */
const toastWith = (title: string, description = '') =>
  waitFor(() => {
    const toasts = [...document.querySelectorAll<HTMLElement>('[data-sonner-toast]')];
    expect(toasts.some((t) => t.textContent?.includes(title) && t.textContent.includes(description))).toBe(true);
  });
/** Waits for the page's cards (the preferences have loaded). */
const loaded = () => screen.findByRole('heading', { name: 'GitHub sign-in', level: 2 });
/** A cached public status, as the sign-in page leaves it. */
const cacheStatus = () => sessionStorage.setItem('status', JSON.stringify({ savedAt: Date.now(), data: { github_oauth: false } }));

describe('preferences', () => {
  it('shows a loading skeleton, then every preference the server lists', async () => {
    // Held until answered; a request made again meanwhile (the page remounting once the session is
    // confirmed cancels and repeats it) is held and answered too.
    let reply: FakeReply | undefined;
    const held: ((reply: FakeReply) => void)[] = [];
    const answer = (r: FakeReply) => {
      reply = r;
      for (const release of held.splice(0)) release(r);
    };
    localStorage.setItem('i18nextLng', 'en');
    storeSession(root);
    fakeApi({
      'GET /api/user/self': () => ok(selfUser(root)),
      'GET /api/option/': () => reply ?? new Promise<FakeReply>((resolve) => held.push(resolve)),
    });
    await renderApp('/preferences');
    expect(await screen.findByTestId('preferences-loading')).toBeInTheDocument();

    answer(
      ok(
        entries({
          ServerAddress: 'https://gw.example.com',
          StdioServiceStartupStrategy: 'demand',
          GitHubClientId: 'gh-id',
          GitHubClientSecret: '********',
          GitHubOAuthEnabled: 'true',
        }),
      ),
    );
    expect(await screen.findByRole('textbox', { name: 'Server address' })).toHaveValue('https://gw.example.com');
    expect(screen.queryByTestId('preferences-loading')).not.toBeInTheDocument();
    expect(screen.getByRole('radio', { name: 'On demand (demand)' })).toBeChecked();
    expect(screen.getByRole('switch', { name: 'Enable GitHub sign-in' })).toBeChecked();
    expect(screen.getByRole('switch', { name: 'Enable Google sign-in' })).not.toBeChecked();
    expect(screen.getByTestId('github-readiness')).toHaveTextContent('On the sign-in page');
    expect(screen.getByTestId('google-readiness')).toHaveTextContent('Off');
  });

  it('a failed load shows an error and its toast with the server message', async () => {
    await openPreferences({}, { 'GET /api/option/': () => fail(400, 'the options table is unreadable') });
    expect(await screen.findByRole('alert')).toHaveTextContent('Could not load the preferences');
    expect(screen.getByRole('alert')).toHaveTextContent('the options table is unreadable');
    await toastWith('Could not load the preferences', 'the options table is unreadable');
    expect(screen.queryByRole('textbox', { name: 'Server address' })).not.toBeInTheDocument();
  });

  describe('server address', () => {
    it('saves it trimmed and without trailing slashes, with the result shown inline', async () => {
      const { server, user } = await openPreferences();
      const field = await screen.findByRole('textbox', { name: 'Server address' });
      cacheStatus();
      await user.type(field, '  https://gw.example.com//  ');
      await user.click(within(card('Server address')).getByRole('button', { name: 'Save' }));

      expect(await within(card('Server address')).findByRole('status')).toHaveTextContent('Server address saved');
      expect(puts(server)).toEqual([{ key: 'ServerAddress', value: 'https://gw.example.com' }]);
      expect(field).toHaveValue('https://gw.example.com');
      expect(document.querySelector('[data-sonner-toast]')).toBeNull();
      // The public status (sign-in page, dashboard) is read afresh next time, not from the cache.
      expect(sessionStorage.getItem('status')).toBeNull();

      await user.type(field, 'x');
      expect(within(card('Server address')).queryByRole('status')).not.toBeInTheDocument();
    });

    it('an empty address is allowed: the server then uses the address it was reached by', async () => {
      const { server, user } = await openPreferences({ ServerAddress: 'https://old.example.com' });
      await user.clear(await screen.findByRole('textbox', { name: 'Server address' }));
      await user.click(within(card('Server address')).getByRole('button', { name: 'Save' }));
      expect(await within(card('Server address')).findByRole('status')).toHaveTextContent('Server address saved');
      expect(puts(server)).toEqual([{ key: 'ServerAddress', value: '' }]);
    });

    it.each([
      ['gateway example', 'Enter a full URL such as https://gateway.example.com'],
      ['ftp://gw.example.com', 'The address must start with http:// or https://'],
      ['https://gw.example.com/?tenant=1', 'The address must not contain a query (?) or a fragment (#)'],
      ['https://gw.example.com/#top', 'The address must not contain a query (?) or a fragment (#)'],
    ])('refuses %s inline without calling the server', async (address, reason) => {
      const { server, user } = await openPreferences();
      const field = await screen.findByRole('textbox', { name: 'Server address' });
      await user.type(field, address);
      await user.click(within(card('Server address')).getByRole('button', { name: 'Save' }));

      const alert = await within(card('Server address')).findByRole('alert');
      expect(alert).toHaveTextContent(`Could not save the server address: ${reason}`);
      expect(field).toHaveAttribute('aria-invalid', 'true');
      expect(puts(server)).toEqual([]);

      await user.type(field, 'x');
      expect(within(card('Server address')).queryByRole('alert')).not.toBeInTheDocument();
    });

    it("a refusal by the server shows the server's message inline, not as a toast", async () => {
      const refused = optionRoutes({}, () => fail(400, 'Invalid value for preference ServerAddress: must be a URL'));
      const { user } = await openPreferences({}, refused);
      await user.type(await screen.findByRole('textbox', { name: 'Server address' }), 'https://gw.example.com');
      await user.click(within(card('Server address')).getByRole('button', { name: 'Save' }));
      expect(await within(card('Server address')).findByRole('alert')).toHaveTextContent(
        'Could not save the server address: Invalid value for preference ServerAddress: must be a URL',
      );
      expect(document.querySelector('[data-sonner-toast]')).toBeNull();
    });

    it('a network failure reads as one, inline', async () => {
      const { user } = await openPreferences({}, { 'PUT /api/option/': () => 'network-error' });
      await user.type(await screen.findByRole('textbox', { name: 'Server address' }), 'https://gw.example.com');
      await user.click(within(card('Server address')).getByRole('button', { name: 'Save' }));
      expect(await within(card('Server address')).findByRole('alert')).toHaveTextContent(
        'Could not save the server address: Network error: please check your network connection',
      );
    });
  });

  describe('stdio startup strategy', () => {
    it('is saved as soon as another choice is made', async () => {
      const { server, user } = await openPreferences();
      const demand = await screen.findByRole('radio', { name: 'On demand (demand)' });
      expect(screen.getByRole('radio', { name: 'At boot (boot)' })).toBeChecked();
      await user.click(demand);

      await toastWith('Preference saved', 'Stdio services now start on their first request.');
      expect(puts(server)).toEqual([{ key: 'StdioServiceStartupStrategy', value: 'demand' }]);
      expect(demand).toBeChecked();

      await user.click(screen.getByRole('radio', { name: 'At boot (boot)' }));
      await toastWith('Preference saved', 'Enabled stdio services start now and keep running.');
      expect(puts(server)).toHaveLength(2);
      expect(puts(server)[1]).toEqual({ key: 'StdioServiceStartupStrategy', value: 'boot' });
    });

    it('saves the idle time of on-demand processes, refusing what the server would not accept', async () => {
      const { server, user } = await openPreferences({ StdioIdleTimeoutMinutes: '10' });
      const minutes = await screen.findByRole('textbox', { name: 'Stop an on-demand process after (minutes without calls)' });
      expect(minutes).toHaveValue('10');
      await user.clear(minutes);
      await user.type(minutes, '0');
      const saveIdle = within(card('Stdio startup strategy')).getByRole('button', { name: 'Save' });
      await user.click(saveIdle);
      expect(await screen.findByText('Enter a whole number of minutes from 1 to 1440.')).toBeInTheDocument();
      expect(puts(server)).toEqual([]);
      await user.clear(minutes);
      await user.type(minutes, '3');
      await user.click(saveIdle);
      await toastWith('Preference saved', 'On-demand processes now stop after 3 minutes without calls.');
      expect(puts(server)).toEqual([{ key: 'StdioIdleTimeoutMinutes', value: '3' }]);
    });

    it("a refusal shows the saveFailed toast with the server's message and the saved choice again", async () => {
      const refused = optionRoutes({}, () => fail(400, 'Invalid value for preference StdioServiceStartupStrategy'));
      const { user } = await openPreferences({}, refused);
      await user.click(await screen.findByRole('radio', { name: 'On demand (demand)' }));
      await toastWith('Could not save the preference', 'Invalid value for preference StdioServiceStartupStrategy');
      expect(screen.getByRole('radio', { name: 'At boot (boot)' })).toBeChecked();
      expect(screen.getByRole('radio', { name: 'On demand (demand)' })).not.toBeChecked();
    });
  });

  describe('sign-in provider switches', () => {
    it('cannot be switched on without a saved client ID, and the server is not asked', async () => {
      const { server, user } = await openPreferences();
      const github = await screen.findByRole('switch', { name: 'Enable GitHub sign-in' });
      await user.click(github);
      await toastWith('Could not save the preference', 'Save the GitHub client ID before enabling GitHub sign-in.');
      expect(github).not.toBeChecked();

      // A client ID typed but not yet saved does not count either.
      await user.type(within(card('Google sign-in')).getByLabelText('Client ID'), 'unsaved-id');
      await user.click(screen.getByRole('switch', { name: 'Enable Google sign-in' }));
      await toastWith('Could not save the preference', 'Save the Google client ID before enabling Google sign-in.');
      expect(puts(server)).toEqual([]);
    });

    it('are saved on change once a client ID is saved, and the cached sign-in buttons are dropped', async () => {
      const { server, user } = await openPreferences({ GitHubClientId: 'gh-id', GitHubClientSecret: '********' });
      const github = await screen.findByRole('switch', { name: 'Enable GitHub sign-in' });
      cacheStatus();
      await user.click(github);

      await toastWith('GitHub sign-in enabled');
      expect(github).toBeChecked();
      expect(screen.getByTestId('github-readiness')).toHaveTextContent('On the sign-in page');
      expect(sessionStorage.getItem('status')).toBeNull();

      await user.click(github);
      await toastWith('GitHub sign-in disabled');
      expect(github).not.toBeChecked();
      expect(puts(server)).toEqual([
        { key: 'GitHubOAuthEnabled', value: 'true' },
        { key: 'GitHubOAuthEnabled', value: 'false' },
      ]);
    });

    it("a refusal shows the server's message and the switch goes back", async () => {
      const refused = optionRoutes({ GoogleClientId: 'g-id' }, () => fail(400, 'Set the Google client ID before enabling Google sign-in'));
      const { user } = await openPreferences({ GoogleClientId: 'g-id' }, refused);
      const google = await screen.findByRole('switch', { name: 'Enable Google sign-in' });
      await user.click(google);
      await toastWith('Could not save the preference', 'Set the Google client ID before enabling Google sign-in');
      expect(google).not.toBeChecked();
    });

    it('an enabled provider without a secret is marked incomplete', async () => {
      await openPreferences({ GoogleClientId: 'g-id', GoogleOAuthEnabled: 'true' });
      expect(await screen.findByTestId('google-readiness')).toHaveTextContent('Incomplete');
      expect(within(card('Google sign-in')).getByText(/stays unavailable until both a client ID and a client secret/)).toBeInTheDocument();
    });
  });

  describe('allowed origins of browser clients', () => {
    it('saves the origins normalised, one per line, with the result inline', async () => {
      const { server, user } = await openPreferences({ AllowedOrigins: 'https://old.example.com' });
      const field = await screen.findByRole('textbox', { name: 'Allowed origins' });
      expect(field).toHaveValue('https://old.example.com');
      await user.clear(field);
      await user.type(field, 'https://App.example.com/, http://localhost:5173');
      await user.click(within(card('Browser clients on other sites')).getByRole('button', { name: 'Save' }));
      expect(await within(card('Browser clients on other sites')).findByRole('status')).toHaveTextContent('Allowed origins saved');
      expect(puts(server)).toEqual([{ key: 'AllowedOrigins', value: 'https://app.example.com\nhttp://localhost:5173' }]);
      expect(field).toHaveValue('https://app.example.com\nhttp://localhost:5173');
    });

    it('refuses an entry that is not an origin inline, naming it, without calling the server', async () => {
      const { server, user } = await openPreferences();
      const field = await screen.findByRole('textbox', { name: 'Allowed origins' });
      await user.type(field, 'https://ok.example.com app.example.com/path');
      await user.click(within(card('Browser clients on other sites')).getByRole('button', { name: 'Save' }));
      expect(await within(card('Browser clients on other sites')).findByRole('alert')).toHaveTextContent(
        'Could not save the allowed origins: "app.example.com/path" is not an origin',
      );
      expect(field).toHaveAttribute('aria-invalid', 'true');
      expect(puts(server)).toEqual([]);
    });
  });

  describe('OpenID Connect providers', () => {
    const title = 'Company sign-in (OpenID Connect)';
    const stored = [
      { slug: 'corp', label: 'Corp SSO', issuer: 'https://sso.example.com/realms/corp', client_id: 'toolport', client_secret: '********' },
    ];

    it('shows the stored providers indented, secrets masked, and saves an edited list', async () => {
      const { server, user } = await openPreferences({ OIDCProviders: JSON.stringify(stored) });
      const field = await screen.findByRole('textbox', { name: 'Providers' });
      expect(field).toHaveValue(JSON.stringify(stored, null, 2));
      const next = [{ ...stored[0], label: 'Company SSO' }];
      await user.clear(field);
      await user.click(field);
      await user.paste(JSON.stringify(next, null, 2));
      await user.click(within(card(title)).getByRole('button', { name: 'Save' }));
      expect(await within(card(title)).findByRole('status')).toHaveTextContent('Sign-in providers saved');
      expect(puts(server)).toEqual([{ key: 'OIDCProviders', value: JSON.stringify(next) }]);
    });

    it('refuses text that is not a JSON list inline, without calling the server', async () => {
      const { server, user } = await openPreferences();
      const field = await screen.findByRole('textbox', { name: 'Providers' });
      await user.click(field);
      await user.paste('{"slug": "corp"');
      await user.click(within(card(title)).getByRole('button', { name: 'Save' }));
      expect(await within(card(title)).findByRole('alert')).toHaveTextContent(
        'Could not save the sign-in providers: This is not valid JSON',
      );
      await user.clear(field);
      await user.paste('{"slug": "corp"}');
      await user.click(within(card(title)).getByRole('button', { name: 'Save' }));
      expect(await within(card(title)).findByRole('alert')).toHaveTextContent('Write a JSON list');
      expect(puts(server)).toEqual([]);
    });

    it('shows the server’s refusal inline in Chinese', async () => {
      const { user } = await openPreferences({}, {}, 'zh-CN');
      const zhTitle = '企业登录（OpenID Connect）';
      const field = await screen.findByRole('textbox', { name: '身份提供方' });
      await user.click(field);
      await user.paste('[{"slug": "Bad Slug"}]');
      // The fake server refuses like the real one does for a document that does not fit.
      const saves = optionRoutes({}, () => fail(400, '设置项 OIDCProviders 的值无效：0.slug: lower-case letters'));
      fakeApi({ 'GET /api/user/self': () => ok(selfUser(root)), ...saves });
      await user.click(within(card(zhTitle)).getByRole('button', { name: '保存' }));
      expect(await within(card(zhTitle)).findByRole('alert')).toHaveTextContent('无法保存登录提供方：设置项 OIDCProviders 的值无效');
    });
  });

  describe('remote services on private networks', () => {
    const name = 'Allow remote services on private networks';

    it('is on by default, with its hint, and saved as soon as it is flipped', async () => {
      const { server, user } = await openPreferences();
      const allow = await screen.findByRole('switch', { name });
      expect(allow).toBeChecked();
      expect(allow).toHaveAccessibleDescription(
        'Turn off to refuse loopback, private and link-local addresses for remote services and their redirects.',
      );

      await user.click(allow);
      await toastWith('Preference saved', 'Remote services on loopback, private and link-local addresses are now refused.');
      expect(allow).not.toBeChecked();
      await user.click(allow);
      await toastWith('Preference saved', 'Remote services may use private network addresses again.');
      expect(allow).toBeChecked();
      expect(puts(server)).toEqual([
        { key: 'AllowPrivateNetworkUpstreams', value: 'false' },
        { key: 'AllowPrivateNetworkUpstreams', value: 'true' },
      ]);
    });

    it('shows the saved value, and goes back when the server refuses', async () => {
      const refused = optionRoutes({ AllowPrivateNetworkUpstreams: 'false' }, () => fail(503, 'the database is read-only'));
      const { user } = await openPreferences({ AllowPrivateNetworkUpstreams: 'false' }, refused);
      const allow = await screen.findByRole('switch', { name });
      expect(allow).not.toBeChecked();
      await user.click(allow);
      await toastWith('Could not save the preference', 'the database is read-only');
      expect(allow).not.toBeChecked();
    });
  });

  describe('MCP clients signing in', () => {
    it('switches dynamic client registration off and on again, in Chinese too', async () => {
      const { server, user } = await openPreferences();
      const registration = await screen.findByRole('switch', { name: 'Let new clients register themselves' });
      expect(registration).toBeChecked();
      await user.click(registration);
      await toastWith('Preference saved', 'New MCP clients can no longer register');
      expect(registration).not.toBeChecked();
      expect(puts(server)).toEqual([{ key: 'OAuthClientRegistrationEnabled', value: 'false' }]);
    });
  });

  describe('audit trail', () => {
    it('is off by default; switching it on asks the server to forward audit entries to the log', async () => {
      const { server, user } = await openPreferences();
      const forwarding = await screen.findByRole('switch', { name: 'Also write each entry to the server log' });
      expect(forwarding).not.toBeChecked();
      await user.click(forwarding);
      await toastWith('Preference saved', 'Audit entries are now written to the server log');
      expect(forwarding).toBeChecked();
      expect(puts(server)).toEqual([{ key: 'AuditLogForwarding', value: 'true' }]);
    });
  });

  describe('client credentials', () => {
    const github = () => card('GitHub sign-in');

    it('shows the stored secret only as the mask the server sends, and Save waits for a change', async () => {
      await openPreferences({ GitHubClientId: 'gh-id', GitHubClientSecret: '********' });
      await loaded();
      const secret = within(github()).getByLabelText('Client secret');
      expect(secret).toHaveValue('');
      expect(secret).toHaveAttribute('placeholder', '********');
      expect(secret).toHaveAttribute('type', 'password');
      expect(within(github()).getByText(/A secret is saved and is never shown/)).toBeInTheDocument();
      expect(within(github()).getByLabelText('Client ID')).toHaveValue('gh-id');
      expect(within(github()).getByRole('button', { name: 'Save credentials' })).toBeDisabled();

      expect(within(card('Google sign-in')).getByLabelText('Client secret')).toHaveAttribute('placeholder', 'Not set');
      expect(within(card('Google sign-in')).getByText('No secret is saved yet.')).toBeInTheDocument();
    });

    it('sends only the client ID when only it changed, never the secret', async () => {
      const { server, user } = await openPreferences({ GitHubClientId: 'gh-id', GitHubClientSecret: '********' });
      await loaded();
      const id = within(github()).getByLabelText('Client ID');
      await user.clear(id);
      await user.type(id, '  gh-new-id ');
      await user.click(within(github()).getByRole('button', { name: 'Save credentials' }));
      await toastWith('GitHub credentials saved');
      expect(puts(server)).toEqual([{ key: 'GitHubClientId', value: 'gh-new-id' }]);
      expect(id).toHaveValue('gh-new-id');
    });

    it('the mask typed back counts as no change', async () => {
      const { server, user } = await openPreferences({ GitHubClientId: 'gh-id', GitHubClientSecret: '********' });
      await loaded();
      await user.type(within(github()).getByLabelText('Client secret'), '********');
      expect(within(github()).getByRole('button', { name: 'Save credentials' })).toBeDisabled();
      await user.type(within(github()).getByLabelText('Client secret'), '{Enter}');
      expect(puts(server)).toEqual([]);
    });

    it('saves a new secret and the ID together, then empties the secret field and shows the mask', async () => {
      const { server, user } = await openPreferences();
      await loaded();
      await user.type(within(github()).getByLabelText('Client ID'), 'gh-id');
      await user.type(within(github()).getByLabelText('Client secret'), 's3cret-value');
      await user.click(within(github()).getByRole('button', { name: 'Save credentials' }));
      await toastWith('GitHub credentials saved');
      expect(puts(server)).toEqual([
        { key: 'GitHubClientId', value: 'gh-id' },
        { key: 'GitHubClientSecret', value: 's3cret-value' },
      ]);
      const secret = within(github()).getByLabelText('Client secret');
      expect(secret).toHaveValue('');
      await waitFor(() => expect(secret).toHaveAttribute('placeholder', '********'));
      expect(screen.queryByDisplayValue('s3cret-value')).not.toBeInTheDocument();
    });

    it('refuses to remove the client ID of an enabled provider', async () => {
      const { server, user } = await openPreferences({ GitHubClientId: 'gh-id', GitHubOAuthEnabled: 'true' });
      await loaded();
      const id = within(github()).getByLabelText('Client ID');
      await user.clear(id);
      await user.click(within(github()).getByRole('button', { name: 'Save credentials' }));
      expect(await within(github()).findByRole('alert')).toHaveTextContent('Switch off GitHub sign-in before removing its client ID.');
      expect(id).toHaveAttribute('aria-invalid', 'true');
      expect(puts(server)).toEqual([]);
      await user.type(id, 'g');
      expect(within(github()).queryByRole('alert')).not.toBeInTheDocument();
    });

    it("a refused save shows the saveFailed toast with the server's message", async () => {
      const refused = optionRoutes({}, () => fail(400, 'Invalid value for preference GoogleClientId: must be at most 256 characters'));
      const { user } = await openPreferences({}, refused);
      await loaded();
      await user.type(within(card('Google sign-in')).getByLabelText('Client ID'), 'g-id');
      await user.click(within(card('Google sign-in')).getByRole('button', { name: 'Save credentials' }));
      await toastWith('Could not save the preference', 'Invalid value for preference GoogleClientId: must be at most 256 characters');
    });
  });

  describe('setup hints', () => {
    it('show the homepage and the callback URLs of the saved server address', async () => {
      const { user } = await openPreferences({ ServerAddress: 'https://gw.example.com' });
      expect(await screen.findByTestId('github-homepage-url')).toHaveValue('https://gw.example.com');
      expect(screen.getByTestId('github-callback-url')).toHaveValue('https://gw.example.com/oauth/github');
      expect(screen.getByTestId('google-homepage-url')).toHaveValue('https://gw.example.com');
      expect(screen.getByTestId('google-callback-url')).toHaveValue('https://gw.example.com/oauth/google');
      expect(screen.queryByText(/No server address is saved/)).not.toBeInTheDocument();

      // They follow the address once it is saved, not while it is typed.
      const field = screen.getByRole('textbox', { name: 'Server address' });
      await user.clear(field);
      await user.type(field, 'https://new.example.com/');
      expect(screen.getByTestId('github-callback-url')).toHaveValue('https://gw.example.com/oauth/github');
      await user.click(within(card('Server address')).getByRole('button', { name: 'Save' }));
      await waitFor(() => expect(screen.getByTestId('github-callback-url')).toHaveValue('https://new.example.com/oauth/github'));
    });

    it("without a saved address they use this console's own address and say so", async () => {
      await openPreferences();
      const origin = window.location.origin;
      expect(await screen.findByTestId('github-callback-url')).toHaveValue(`${origin}/oauth/github`);
      expect(screen.getByTestId('google-callback-url')).toHaveValue(`${origin}/oauth/google`);
      expect(screen.getAllByText(/No server address is saved/)).toHaveLength(2);
    });
  });

  it('reads in Chinese', async () => {
    const { user } = await openPreferences({}, {}, 'zh-CN');
    expect(await screen.findByRole('radio', { name: '按需（demand）' })).toBeInTheDocument();
    expect(screen.getByRole('switch', { name: '启用 GitHub 登录' })).toBeInTheDocument();
    expect(screen.getAllByLabelText('授权回调地址')).toHaveLength(2);
    expect(screen.getByRole('switch', { name: '允许内网远程服务' })).toHaveAccessibleDescription(
      '关闭后，远程服务及其重定向不得指向回环、内网和链路本地地址。',
    );
    await user.click(screen.getByRole('switch', { name: '启用 Google 登录' }));
    await toastWith('保存设置失败', '启用 Google 登录前，请先保存其 Client ID。');
    await user.type(screen.getByRole('textbox', { name: '服务器地址' }), 'ftp://gw.example.com');
    await user.click(within(card('服务器地址')).getByRole('button', { name: '保存' }));
    expect(await within(card('服务器地址')).findByRole('alert')).toHaveTextContent(
      '服务器地址保存失败：地址必须以 http:// 或 https:// 开头',
    );
  });
});
