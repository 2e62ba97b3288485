import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { navItems } from '../../app/nav-items';
import type { Language } from '../../lib/i18n';
import { fakeApi } from '../../test/fake-api';
import { renderApp } from '../../test/render';
import { clientIds, clientSnippet } from '../services';
import { type DocPageId, docPageIds, docPageMeta, isDocPageId } from './pages';

/** The page texts as files, read directly: what the route loads lazily. */
const sources = import.meta.glob<string>('./content/*/*.md', { query: '?raw', import: 'default', eager: true });
const source = (language: Language, id: DocPageId): string => {
  const text = sources[`./content/${language}/${id}.md`];
  if (text === undefined) throw new Error(`missing ${language}/${id}.md`);
  return text;
};

const languages: Language[] = ['en', 'zh-CN'];
const cases = languages.flatMap((language) => docPageIds.map((id) => [language, id] as const));

/** Console routes a page may link to: the sidebar's pages. Server paths: the API reference. */
const consoleRoutes = new Set(navItems.map((item) => item.to));
const serverPaths = new Set(['/api/docs']);

function linkResolves(href: string): boolean {
  const path = href.split('#')[0] ?? '';
  if (path.startsWith('/docs/')) return isDocPageId(path.slice('/docs/'.length));
  return consoleRoutes.has(path) || serverPaths.has(path);
}

async function open(path: string, language: Language) {
  localStorage.setItem('i18nextLng', language);
  // Signed out: the docs are public and ask the server for nothing.
  const server = fakeApi({});
  const app = await renderApp(path);
  return { server, user: userEvent.setup(), ...app };
}

describe('documentation pages', () => {
  it.each(cases)('%s %s renders as a titled page with sections, the page list and working links', async (language, id) => {
    const { server } = await open(`/docs/${id}`, language);
    expect(await screen.findByRole('heading', { level: 1, name: docPageMeta[language][id].title })).toBeVisible();
    const body = await screen.findByTestId('doc-body');
    expect(within(body).getAllByRole('heading', { level: 2 }).length).toBeGreaterThan(1);
    // Rendered, not shown as Markdown source, and no placeholder left.
    expect(body.textContent).not.toMatch(/^#+ |\]\(/m);
    expect(document.body.textContent).not.toMatch(/on its way|即将上线/);
    await waitFor(() => expect(document.title).toBe(`${docPageMeta[language][id].title} · Toolport`));

    const nav = screen.getByRole('navigation', { name: language === 'en' ? 'Documentation pages' : '文档页面' });
    const current = within(nav).getByRole('link', { current: 'page' });
    expect(current).toHaveTextContent(docPageMeta[language][id].title);

    const links = within(body).queryAllByRole('link');
    for (const link of links) {
      const href = link.getAttribute('href') ?? '';
      expect.soft(linkResolves(href), `${language}/${id}: ${href}`).toBe(true);
    }
    expect(server.calls).toEqual([]);
  });

  it.each(cases)('%s %s links only to pages and routes that exist', (language, id) => {
    const targets = [...source(language, id).matchAll(/\]\(([^)\s]+)\)/g)].map((match) => match[1] ?? '');
    for (const target of targets) expect.soft(linkResolves(target), `${language}/${id}: ${target}`).toBe(true);
  });

  it.each(docPageIds)('%s says the same commands and configuration in both languages', (id) => {
    const blocks = (text: string) => [...text.matchAll(/```[a-z]*\n[\s\S]*?```/g)].map((match) => match[0]);
    expect(blocks(source('zh-CN', id))).toEqual(blocks(source('en', id)));
  });

  it.each(languages)('the %s client page shows exactly what the Configure dialog copies, with a key and without', (language) => {
    const text = source(language, 'clients');
    const url = 'https://toolport.example.com/proxy/memory/mcp';
    for (const client of clientIds) {
      expect.soft(text, client).toContain(clientSnippet(client, 'memory', url, 'streamableHttp', 'tp_YOUR_API_KEY').text);
    }
    // The sign-in variants the page shows in full.
    for (const client of ['claudeCode'] as const) {
      expect(text).toContain(clientSnippet(client, 'memory', url, 'streamableHttp', undefined).text);
    }
  });

  it('the overview lists every page and the API reference; a page link opens that page', async () => {
    const { user } = await open('/docs', 'en');
    expect(await screen.findByRole('heading', { level: 1, name: 'Documentation' })).toBeVisible();
    const main = screen.getByRole('main');
    for (const id of docPageIds) expect(within(main).getAllByRole('link', { name: docPageMeta.en[id].title }).length).toBe(2);
    for (const link of within(main).getAllByRole('link', { name: 'API reference' })) expect(link).toHaveAttribute('href', '/api/docs');

    await user.click(within(screen.getByRole('article')).getByRole('link', { name: 'Groups' }));
    expect(await screen.findByRole('heading', { level: 1, name: 'Groups' })).toBeVisible();
    // An in-text link moves to the page it names, inside the console.
    await user.click(within(await screen.findByTestId('doc-body')).getAllByRole('link', { name: 'Connecting clients' })[0] as HTMLElement);
    expect(await screen.findByRole('heading', { level: 1, name: 'Connecting clients' })).toBeVisible();
    await user.click(screen.getByRole('link', { name: 'Groups →' }));
    expect(await screen.findByRole('heading', { level: 1, name: 'Groups' })).toBeVisible();
  });

  it('follows the language switch without a reload', async () => {
    const { i18n } = await open('/docs/oauth', 'en');
    expect(await screen.findByRole('heading', { level: 2, name: 'Remote services that need OAuth' })).toBeVisible();
    await i18n.changeLanguage('zh-CN');
    expect(await screen.findByRole('heading', { level: 1, name: 'OAuth' })).toBeVisible();
    expect(await screen.findByRole('heading', { level: 2, name: '需要 OAuth 授权的远程服务' })).toBeVisible();
    expect(screen.queryByRole('heading', { name: 'Remote services that need OAuth' })).toBeNull();
  });

  it('an unknown page says so and leads back to the overview', async () => {
    const { user } = await open('/docs/no-such-page', 'zh-CN');
    expect(await screen.findByRole('heading', { level: 1, name: '没有这个文档页面' })).toBeVisible();
    await user.click(within(screen.getByRole('main')).getAllByRole('link', { name: '概览' }).at(-1) as HTMLElement);
    expect(await screen.findByRole('heading', { level: 1, name: '文档' })).toBeVisible();
  });
});
