import { en, type MessageKey } from './en.js';
import { zhCN } from './zh-CN.js';

export type { MessageKey } from './en.js';
export type Locale = 'en' | 'zh-CN';
export type MessageParams = Record<string, string | number>;

const catalogs: Record<Locale, Record<MessageKey, string>> = { en, 'zh-CN': zhCN };

/** Picks en or zh-CN from an Accept-Language header by q-weight; anything Chinese maps to zh-CN. */
export function localeFrom(acceptLanguage: string | undefined): Locale {
  if (!acceptLanguage) return 'en';
  const ranked = acceptLanguage
    .split(',')
    .map((part) => {
      const [tag = '', ...params] = part.trim().split(';');
      const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
      return { tag: tag.toLowerCase(), q: q ? Number(q.slice(2)) || 0 : 1 };
    })
    .filter((x) => x.tag && x.q > 0)
    .sort((a, b) => b.q - a.q);
  for (const { tag } of ranked) {
    if (tag.startsWith('zh')) return 'zh-CN';
    if (tag.startsWith('en') || tag === '*') return 'en';
  }
  return 'en';
}

export function translate(locale: Locale, key: MessageKey, params?: MessageParams): string {
  const template = catalogs[locale][key] ?? en[key];
  if (!params) return template;
  return template.replace(/\{(\w+)\}/g, (whole, name: string) => (name in params ? String(params[name]) : whole));
}

/** A key read back from storage (a task's recorded failure cause) is one of the catalog's. */
export const isMessageKey = (key: string): key is MessageKey => Object.hasOwn(en, key);
