import { readFileSync } from 'node:fs';
import path from 'node:path';
import { expect, type Page } from '@playwright/test';
import { repoRoot } from './server';

type Tree = { [key: string]: string | Tree };

function flatten(tree: Tree, prefix = ''): Map<string, string> {
  const out = new Map<string, string>();
  for (const [key, value] of Object.entries(tree)) {
    const full = prefix ? `${prefix}.${key}` : key;
    if (typeof value === 'string') out.set(full, value);
    else for (const [k, v] of flatten(value, full)) out.set(k, v);
  }
  return out;
}

function localeFile(lng: string, ns: string): Map<string, string> {
  return flatten(JSON.parse(readFileSync(path.join(repoRoot, 'apps/web/public/locales', lng, `${ns}.json`), 'utf8')) as Tree);
}

/**
 * Text a reader sees on the page: visible text nodes, plus labels, placeholders and titles, leaving out
 * what is data rather than interface (code, URLs and JSON in monospace boxes, values typed in fields).
 */
async function visibleTexts(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const skip = (el: Element | null) => !!el?.closest('pre, code, .font-mono, input, textarea, script, style, [data-i18n-data]');
    const texts: string[] = [];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const el = node.parentElement;
      const text = node.textContent?.trim();
      if (!text || skip(el) || !el) continue;
      const style = getComputedStyle(el);
      if (style.display === 'none' || style.visibility === 'hidden') continue;
      texts.push(text);
    }
    for (const el of document.body.querySelectorAll('[aria-label], [placeholder], [title]')) {
      if (el.closest('pre, code, script, [data-i18n-data]')) continue;
      for (const attr of ['aria-label', 'placeholder', 'title']) {
        const value = el.getAttribute(attr)?.trim();
        if (value && !(attr === 'placeholder' && el.classList.contains('font-mono'))) texts.push(value);
      }
    }
    return texts;
  });
}

/** Three or more English words in a row: a sentence someone forgot to translate. */
const ENGLISH_SENTENCE = /\b[A-Za-z]{2,}(?:[ ,'-]+[A-Za-z]{2,}){2,}\b/;

/**
 * Fails when the zh-CN page shows a raw translation key of `namespaces` or an English sentence: either
 * the English text of a key whose Chinese text differs, or any run of three English words not in `allowed`
 * (product names and the like).
 */
export async function expectChineseOnly(page: Page, namespaces: string[], allowed: string[] = []): Promise<void> {
  const keys = new Set<string>();
  const english = new Set<string>();
  for (const ns of namespaces) {
    const en = localeFile('en', ns);
    const zh = localeFile('zh-CN', ns);
    for (const [key, value] of en) {
      keys.add(key);
      keys.add(`${ns}:${key}`);
      if (zh.get(key) !== value && value.length > 3 && !value.includes('{{')) english.add(value);
    }
  }
  const problems: string[] = [];
  for (const text of await visibleTexts(page)) {
    if (keys.has(text)) problems.push(`raw key: ${text}`);
    else if (english.has(text)) problems.push(`English: ${text}`);
    else {
      const stripped = allowed.reduce((t, a) => t.replaceAll(a, ''), text);
      const sentence = ENGLISH_SENTENCE.exec(stripped);
      if (sentence) problems.push(`English words "${sentence[0]}" in: ${text}`);
    }
  }
  expect(problems, `on ${page.url()}`).toEqual([]);
}
