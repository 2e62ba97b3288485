import { gunzipSync, gzipSync } from 'node:zlib';
import { expect, type Page } from '@playwright/test';

/** Browser console errors and uncaught page errors, collected from now on. */
export function collectConsoleErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text());
  });
  page.on('pageerror', (error) => errors.push(error.message));
  return errors;
}

/**
 * Text that looks like a translation key left untranslated: `section.key`, `ns:section.key`. Checked on
 * every visible text node and label, beside support/zh-text-check.ts (which knows the keys of given
 * namespaces, while this catches keys of any namespace).
 */
export async function expectNoRawKeys(page: Page): Promise<void> {
  const suspicious = await page.evaluate(() => {
    const looksLikeKey = (text: string) =>
      /^[a-z]+(\.[a-zA-Z_]+)+$/.test(text) || /^[a-z]+:[a-zA-Z_.]+$/.test(text) || /common\./.test(text);
    const found: string[] = [];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const text = node.textContent?.trim() ?? '';
      if (text && looksLikeKey(text)) found.push(text);
    }
    for (const el of document.body.querySelectorAll('[aria-label], [title], [placeholder]')) {
      for (const attr of ['aria-label', 'title', 'placeholder']) {
        const value = el.getAttribute(attr)?.trim() ?? '';
        if (value && looksLikeKey(value)) found.push(`${attr}=${value}`);
      }
    }
    return found;
  });
  expect(suspicious, `raw keys on ${page.url()}`).toEqual([]);
}

/** Records the JavaScript the page downloads; `gzippedKb()` is its size as a gzip-compressing server would send it. */
export function measureScripts(page: Page): { gzippedKb(): number; files(): string[] } {
  const sizes = new Map<string, number>();
  page.on('response', async (res) => {
    if (res.request().resourceType() !== 'script') return;
    const body = await res.body().catch(() => null);
    if (!body) return;
    const raw = res.headers()['content-encoding'] === 'gzip' ? gunzipSync(body) : body;
    sizes.set(new URL(res.url()).pathname, gzipSync(raw).length);
  });
  return {
    gzippedKb: () => [...sizes.values()].reduce((a, b) => a + b, 0) / 1024,
    files: () => [...sizes.keys()],
  };
}
