import { describe, expect, it } from 'vitest';
import { localeResources } from '../test/render';
import { namespaces, supportedLanguages } from './i18n';

/** Every key path of a nested translation object, e.g. `theme.light`. */
function keys(tree: unknown, prefix = ''): string[] {
  if (typeof tree !== 'object' || tree === null) return [prefix];
  return Object.entries(tree).flatMap(([k, v]) => keys(v, prefix ? `${prefix}.${k}` : k));
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
});
