import type { TFunction } from 'i18next';

const KNOWN_SOURCES = ['npm', 'pypi', 'mcp_registry', 'custom'] as const;
const isKnownSource = (source: string): source is (typeof KNOWN_SOURCES)[number] => (KNOWN_SOURCES as readonly string[]).includes(source);

/** How a source is named: npm, PyPI, MCP Registry, Custom; another one as it is; '' when there is none. */
export function sourceLabel(source: string, t: TFunction<'market'>): string {
  if (!source) return '';
  return isKnownSource(source) ? t(`sources.${source}`) : source;
}

/** Counts grouped the way the reader's language writes them (1,234 in en and zh-CN). */
export function formatCount(count: number, language: string): string {
  return new Intl.NumberFormat(language).format(count);
}
