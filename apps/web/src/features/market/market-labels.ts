import type { TFunction } from 'i18next';

const KNOWN_SOURCES = new Set(['npm', 'pypi', 'mcp_registry', 'custom']);

/** How a source is named: npm, PyPI, MCP Registry, Custom; another one as it is; '' when there is none. */
export function sourceLabel(source: string, t: TFunction<'market'>): string {
  if (!source) return '';
  return KNOWN_SOURCES.has(source) ? t(`sources.${source}`) : source;
}

/** Counts grouped the way the reader's language writes them (1,234 in en and zh-CN). */
export function formatCount(count: number, language: string): string {
  return new Intl.NumberFormat(language).format(count);
}
