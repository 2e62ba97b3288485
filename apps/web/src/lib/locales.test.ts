import { describe, expect, it } from 'vitest';
import { localeResources } from '../test/render';
import { namespaces, supportedLanguages } from './i18n';

/** Every key path of a nested translation object, e.g. `theme.light`. */
function keys(tree: unknown, prefix = ''): string[] {
  if (typeof tree !== 'object' || tree === null) return [prefix];
  return Object.entries(tree).flatMap(([k, v]) => keys(v, prefix ? `${prefix}.${k}` : k));
}

function valueAt(tree: unknown, key: string): unknown {
  return key.split('.').reduce<unknown>((node, part) => (node as Record<string, unknown> | undefined)?.[part], tree);
}

/** The `{{name}}` variables a text interpolates, each once, sorted (a text may repeat one). */
function variables(text: unknown): string[] {
  if (typeof text !== 'string') return [];
  return [...new Set([...text.matchAll(/\{\{\s*([^\s},]+)/g)].map((m) => m[1] ?? ''))].sort();
}

describe('locale files', () => {
  it('exist for every supported language and namespace, and nothing else', () => {
    expect(Object.keys(localeResources).sort()).toEqual([...supportedLanguages].sort());
    for (const lng of supportedLanguages) {
      expect(Object.keys(localeResources[lng] ?? {}).sort()).toEqual([...namespaces].sort());
    }
  });

  it.each(namespaces)('%s has the same keys in en and zh-CN, none empty', (ns) => {
    const en = localeResources.en?.[ns];
    const zh = localeResources['zh-CN']?.[ns];
    expect(keys(zh).sort()).toEqual(keys(en).sort());
    for (const tree of [en, zh]) {
      for (const key of keys(tree)) {
        const value = key.split('.').reduce<unknown>((node, part) => (node as Record<string, unknown>)[part], tree);
        expect(typeof value === 'string' && value.trim() !== '', `${ns}:${key}`).toBe(true);
      }
    }
  });

  // Keys are checked by the compiler against en only; a zh-CN text naming another variable would show `{{…}}` raw.
  it.each(namespaces)('%s: each zh-CN text uses the variables of its en text', (ns) => {
    const en = localeResources.en?.[ns];
    const zh = localeResources['zh-CN']?.[ns];
    for (const key of keys(en)) {
      expect(variables(valueAt(zh, key)), `${ns}:${key}`).toEqual(variables(valueAt(en, key)));
    }
  });
});
