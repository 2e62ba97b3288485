import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, vi } from 'vitest';
import { fail, ok } from '../../test/fake-api';
import { installedService } from '../../test/installed-service';
import { marketPackage, renderMarket } from './test-fixtures';

function deferred<T>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

const card = (name: string) => screen.getByRole('group', { name });

describe('marketplace list: tabs and search (docs/console.md §2.10)', () => {
  it('opens on the npm tab, and searches nothing until a term is given', async () => {
    const { api } = await renderMarket('/market');
    expect(await screen.findByRole('tab', { name: 'npm', selected: true })).toBeInTheDocument();
    for (const tab of ['PyPI', 'MCP Registry', 'Installed']) expect(screen.getByRole('tab', { name: tab })).toBeInTheDocument();
    // Before any search: the hint, never "No services found".
    expect(screen.getByText('Type a name or a topic and press Enter to search.')).toBeInTheDocument();
    expect(screen.queryByText('No services found')).not.toBeInTheDocument();
    expect(api.callsTo('GET', '/api/mcp_market/search')).toHaveLength(0);
  });

  it('searches the tab’s source when Enter is pressed, with a spinner while it runs', async () => {
    const answer = deferred<ReturnType<typeof ok>>();
    const { api } = await renderMarket('/market', { 'GET /api/mcp_market/search': () => answer.promise });
    const user = userEvent.setup();
    await user.type(await screen.findByRole('searchbox', { name: 'Search packages' }), '  echo  {Enter}');
    expect(await screen.findByRole('status')).toHaveTextContent('Searching…');
    answer.resolve(ok([marketPackage()]));
    expect(await screen.findByRole('group', { name: 'acme-echo-mcp' })).toBeInTheDocument();
    expect(screen.queryByText('Searching…')).not.toBeInTheDocument();
    const [call] = api.callsTo('GET', '/api/mcp_market/search');
    expect(call?.url.searchParams.get('query')).toBe('echo');
    expect(call?.url.searchParams.get('sources')).toBe('npm');
  });

  it('searches with the button too, on the source of the chosen tab, keeping the term across tabs', async () => {
    const { api } = await renderMarket('/market');
    const user = userEvent.setup();
    await user.click(await screen.findByRole('tab', { name: 'PyPI' }));
    await user.type(screen.getByRole('searchbox', { name: 'Search packages' }), 'notes');
    await user.click(screen.getByRole('button', { name: 'Search' }));
    await waitFor(() => expect(api.callsTo('GET', '/api/mcp_market/search')).toHaveLength(1));
    expect(api.callsTo('GET', '/api/mcp_market/search')[0]?.url.searchParams.get('sources')).toBe('pypi');

    await user.click(screen.getByRole('tab', { name: 'MCP Registry' }));
    await waitFor(() => expect(api.callsTo('GET', '/api/mcp_market/search')).toHaveLength(2));
    const second = api.callsTo('GET', '/api/mcp_market/search')[1];
    expect([second?.url.searchParams.get('sources'), second?.url.searchParams.get('query')]).toEqual(['mcp_registry', 'notes']);
    expect(screen.getByRole('searchbox', { name: 'Search packages' })).toHaveValue('notes');
  });

  it('searches again when the same term is submitted again', async () => {
    const { api } = await renderMarket('/market?source=npm&q=echo');
    const user = userEvent.setup();
    await screen.findByRole('group', { name: 'acme-echo-mcp' });
    await user.click(screen.getByRole('button', { name: 'Search' }));
    await waitFor(() => expect(api.callsTo('GET', '/api/mcp_market/search')).toHaveLength(2));
  });

  it("says 'No services found' for a search without results, and for a blank term sends nothing", async () => {
    const { api } = await renderMarket('/market?source=npm&q=nothing', { 'GET /api/mcp_market/search': () => ok([]) });
    const user = userEvent.setup();
    expect(await screen.findByText('No services found')).toBeInTheDocument();
    const box = screen.getByRole('searchbox', { name: 'Search packages' });
    await user.clear(box);
    await user.type(box, '   {Enter}');
    expect(await screen.findByText('Type a name or a topic and press Enter to search.')).toBeInTheDocument();
    expect(api.callsTo('GET', '/api/mcp_market/search')).toHaveLength(1);
  });

  it('shows scoped names apart: the scope small above, the whole name after it, nothing cut', async () => {
    const names = ['server-everything', 'server-memory', 'server-filesystem'];
    await renderMarket('/market?source=npm&q=modelcontextprotocol', {
      'GET /api/mcp_market/search': () => ok(names.map((n) => marketPackage({ name: `@modelcontextprotocol/${n}` }))),
    });
    const cards = await screen.findAllByTestId('market-card');
    expect(cards).toHaveLength(3);
    expect(cards.map((c) => within(c).getByTestId('card-name').textContent)).toEqual(names);
    for (const card of cards) {
      expect(within(card).getByTestId('card-scope')).toHaveTextContent('@modelcontextprotocol/');
      expect(within(card).getByTestId('card-name').className).not.toContain('truncate');
    }
  });

  it('shows a failed search as a failure with the server’s reason, Retry and Custom Install; no toast', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    const message = 'The search failed, so it is not known whether such a package exists: npm (HTTP 500)';
    const { api } = await renderMarket('/market?source=npm&q=echo', { 'GET /api/mcp_market/search': () => fail(502, message) });
    const alert = await screen.findByRole('alert');
    expect(alert).toHaveTextContent('The search failed');
    expect(alert).toHaveTextContent(message);
    expect(screen.queryByText('No services found')).not.toBeInTheDocument();
    await waitFor(() => expect(warn).toHaveBeenCalled());
    expect(document.querySelector('[data-sonner-toast]')).toBeNull();
    const user = userEvent.setup();
    await user.click(screen.getByRole('button', { name: 'Retry' }));
    await waitFor(() => expect(api.callsTo('GET', '/api/mcp_market/search')).toHaveLength(2));
    // The panel comes back once the second answer (another failure) has come.
    expect(await screen.findByRole('button', { name: 'Custom Install' })).toBeInTheDocument();
    expect(screen.getByRole('alert')).toHaveTextContent(message);
  });

  it.each([
    ['en', 'Some results may be missing', 'Custom Install'],
    ['zh-CN', '部分结果可能缺失', '自定义安装'],
  ])('shows partial-failure warnings above the results, with Custom Install (%s)', async (lng, title, custom) => {
    localStorage.setItem('i18nextLng', lng);
    const message =
      'The PyPI results may be incomplete: its search through the MCP Registry failed (HTTP 500); MCP_REGISTRY_URL points at it';
    await renderMarket('/market?source=pypi&q=notes', {
      'GET /api/mcp_market/search': () => ({
        status: 200,
        body: {
          success: true,
          data: [marketPackage({ name: 'acme-notes-mcp', package_manager: 'pypi' })],
          warnings: [{ source: 'pypi', message }],
        },
      }),
    });
    const banner = await screen.findByTestId('search-warnings');
    expect(banner).toHaveTextContent(title);
    expect(banner).toHaveTextContent(message);
    expect(within(banner).getByRole('button', { name: custom })).toBeInTheDocument();
    // The results are still there, below the warning.
    const grid = screen.getByTestId('market-grid');
    expect(within(grid).getByRole('group', { name: 'acme-notes-mcp' })).toBeInTheDocument();
    expect(banner.compareDocumentPosition(grid) & Node.DOCUMENT_POSITION_FOLLOWING).toBeTruthy();
  });

  it('shows no warning banner when every source answered', async () => {
    await renderMarket('/market?source=npm&q=echo');
    expect(await screen.findByRole('group', { name: 'acme-echo-mcp' })).toBeInTheDocument();
    expect(screen.queryByTestId('search-warnings')).not.toBeInTheDocument();
  });

  it('lists the installed services on the Installed tab instead of searching', async () => {
    const { api } = await renderMarket('/market?source=installed', {
      'GET /api/mcp_market/installed': () =>
        ok([
          installedService({ id: 3, display_name: 'Echo', source: 'npm', package_name: 'acme-echo-mcp', package_manager: 'npm' }),
          installedService({ id: 4, display_name: 'Remote', source: 'custom' }),
          // Added as `npx -y <pkg>@<version>` and pinned (decision 0035).
          installedService({
            id: 5,
            display_name: 'Everything',
            source: 'custom',
            package_name: '@modelcontextprotocol/server-everything',
            package_manager: 'npm',
            version: '2026.8.31',
            typed_command: 'npx -y @modelcontextprotocol/server-everything@2026.8.31',
          }),
        ]),
    });
    expect(await screen.findByRole('group', { name: 'Echo' })).toBeInTheDocument();
    expect(screen.queryByRole('searchbox')).not.toBeInTheDocument();
    expect(within(card('Echo')).getByRole('button', { name: 'Uninstall' })).toBeInTheDocument();
    expect(within(card('Echo')).getByRole('link', { name: 'Details of Echo' })).toHaveAttribute('href', '/market/npm/acme-echo-mcp');
    expect(within(card('Remote')).getByRole('button', { name: 'Details' })).toBeDisabled();
    expect(within(card('Remote')).getByTestId('card-author')).toHaveTextContent('Custom');
    // Name and version apart: Details opens the package, its link names no version, the pinned version shows,
    // and no registry name stands in for an author nobody knows (issue 15).
    const everything = card('Everything');
    expect(within(everything).getByRole('link', { name: 'Details of Everything' })).toHaveAttribute(
      'href',
      '/market/npm/%40modelcontextprotocol/server-everything',
    );
    expect(within(everything).getByTestId('card-version')).toHaveTextContent('2026.8.31');
    expect(within(everything).queryByTestId('card-author')).not.toBeInTheDocument();
    expect(within(card('Echo')).queryByTestId('card-author')).not.toBeInTheDocument();
    expect(api.callsTo('GET', '/api/mcp_market/search')).toHaveLength(0);
  });
});

describe('marketplace cards (docs/console.md §2.10)', () => {
  it('shows every field: linked name, version, source, description, homepage, stars, weekly downloads, author', async () => {
    await renderMarket('/market?source=npm&q=echo');
    const echo = await screen.findByRole('group', { name: 'acme-echo-mcp' });
    expect(within(echo).getByRole('link', { name: 'acme-echo-mcp' })).toHaveAttribute(
      'href',
      'https://www.npmjs.com/package/acme-echo-mcp',
    );
    expect(within(echo).getByTestId('card-version')).toHaveTextContent('1.0.0');
    expect(within(echo).getByText('npm')).toBeInTheDocument();
    expect(within(echo).getByText('Echo tools for MCP clients')).toBeInTheDocument();
    const homepage = within(echo).getByRole('link', { name: 'Homepage' });
    expect(homepage).toHaveAttribute('href', 'https://github.com/acme/echo-mcp#readme');
    expect(homepage.querySelector('svg path')).not.toBeNull();
    expect(within(echo).getByTestId('card-stars')).toHaveTextContent('12 stars');
    expect(within(echo).getByTestId('card-downloads')).toHaveTextContent('321 downloads a week');
    expect(within(echo).getByTestId('card-author')).toHaveTextContent('Acme Tools');
    expect(within(echo).getByRole('link', { name: 'Details of acme-echo-mcp' })).toHaveAttribute('href', '/market/npm/acme-echo-mcp');
    expect(within(echo).getByRole('button', { name: 'Install' })).toBeEnabled();
  });

  it('uses the fallbacks: no description, unknown version, author from GitHub, else the source; stars only for GitHub homepages', async () => {
    await renderMarket('/market?source=npm&q=x', {
      'GET /api/mcp_market/search': () =>
        ok([
          marketPackage({ name: 'bare', description: '', version: '', author: '', homepage: 'https://example.com', github_stars: 99 }),
          marketPackage({ name: 'gh', author: '', homepage: 'https://github.com/octo-org/gh', github_stars: 0 }),
          marketPackage({ name: 'nohome', homepage: '', downloads: 1234567 }),
        ]),
    });
    const bare = await screen.findByRole('group', { name: 'bare' });
    expect(within(bare).getByText('No description available.')).toBeInTheDocument();
    expect(within(bare).getByTestId('card-version')).toHaveTextContent('0.0.0');
    expect(within(bare).getByTestId('card-author')).toHaveTextContent('npm');
    expect(within(bare).queryByTestId('card-stars')).not.toBeInTheDocument();
    expect(within(bare).getByRole('link', { name: 'Homepage' }).querySelector('.lucide-globe')).not.toBeNull();
    const gh = card('gh');
    expect(within(gh).getByTestId('card-author')).toHaveTextContent('octo-org');
    // A real 0 (the server said so) is shown as 0: only an unknown count is "—".
    expect(within(gh).getByTestId('card-stars')).toHaveTextContent('0 stars');
    const nohome = card('nohome');
    expect(within(nohome).queryByRole('link', { name: 'Homepage' })).not.toBeInTheDocument();
    expect(within(nohome).getByTestId('card-downloads')).toHaveTextContent('1,234,567 downloads a week');
  });

  it.each([
    ['en', 'unknown', '1,234 downloads a week'],
    ['zh-CN', '未知', '每周下载 1,234 次'],
  ])('shows counts the source did not provide as "—" with the tooltip "unknown", never as 0 (%s)', async (lng, unknown, downloads) => {
    localStorage.setItem('i18nextLng', lng);
    await renderMarket('/market?source=npm&q=x', {
      'GET /api/mcp_market/search': () =>
        ok([
          marketPackage({ name: 'nocounts', homepage: 'https://github.com/acme/nocounts', github_stars: null, downloads: null }),
          marketPackage({ name: 'counted', homepage: 'https://github.com/acme/counted', github_stars: 3, downloads: 1234 }),
        ]),
    });
    const none = await screen.findByRole('group', { name: 'nocounts' });
    const unknowns = within(none).getAllByTestId('unknown-count');
    expect(unknowns).toHaveLength(2);
    for (const u of unknowns) {
      expect(u).toHaveTextContent('—');
      expect(u).toHaveAttribute('title', unknown);
    }
    expect(within(none).getByTestId('card-stars')).not.toHaveTextContent('0');
    const counted = card('counted');
    expect(within(counted).queryByTestId('unknown-count')).not.toBeInTheDocument();
    expect(within(counted).getByTestId('card-downloads')).toHaveTextContent(downloads);
  });

  it("shows 'Unknown Source' when neither an author nor a source is known", async () => {
    await renderMarket('/market?source=installed', {
      'GET /api/mcp_market/installed': () => ok([installedService({ id: 2, display_name: 'Odd', source: '' })]),
    });
    const odd = await screen.findByRole('group', { name: 'Odd' });
    expect(within(odd).getByTestId('card-author')).toHaveTextContent('Unknown Source');
  });

  it('lays the cards out in 1, 2 or 3 columns by width', async () => {
    await renderMarket('/market?source=npm&q=echo');
    await screen.findByRole('group', { name: 'acme-echo-mcp' });
    expect(screen.getByTestId('market-grid').className).toMatch(/\bgrid\b.*sm:grid-cols-2.*xl:grid-cols-3/);
  });

  it('shows the same texts in Chinese', async () => {
    localStorage.setItem('i18nextLng', 'zh-CN');
    await renderMarket('/market?source=npm&q=x', {
      'GET /api/mcp_market/search': () => ok([marketPackage({ name: 'bare', description: '', author: '', homepage: '' })]),
    });
    const bare = await screen.findByRole('group', { name: 'bare' });
    expect(within(bare).getByText('暂无描述。')).toBeInTheDocument();
    expect(within(bare).getByRole('button', { name: '安装' })).toBeInTheDocument();
    expect(within(bare).getByTestId('card-downloads')).toHaveTextContent('每周下载 321 次');
    expect(screen.getByRole('tab', { name: '已安装' })).toBeInTheDocument();
  });
});
