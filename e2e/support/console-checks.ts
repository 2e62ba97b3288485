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

/**
 * Records the JavaScript the page downloads as it crosses the wire: `transferredKb()` counts each script's
 * body as the server sent it (brotli or gzip when the server compresses, which it must: decision 0023), and
 * `encodings()` says how each came.
 */
export function measureScripts(page: Page): {
  transferredKb(): Promise<number>;
  files(): string[];
  encodings(): Map<string, string>;
} {
  const sizes = new Map<string, number>();
  const encodings = new Map<string, string>();
  const pending: Promise<void>[] = [];
  page.on('requestfinished', (request) => {
    if (request.resourceType() !== 'script') return;
    pending.push(
      (async () => {
        const path = new URL(request.url()).pathname;
        const [sizes_, res] = await Promise.all([request.sizes(), request.response()]);
        sizes.set(path, sizes_.responseBodySize);
        encodings.set(path, (await res?.allHeaders())?.['content-encoding'] ?? 'identity');
      })().catch(() => {}),
    );
  });
  return {
    transferredKb: async () => {
      await Promise.all(pending);
      return [...sizes.values()].reduce((a, b) => a + b, 0) / 1024;
    },
    files: () => [...sizes.keys()],
    encodings: () => encodings,
  };
}
