import type { Language } from '../../lib/i18n';

/** The user documentation's pages, in reading order (docs/decisions/0055-docs-in-the-console.md). */
export const docPageIds = ['getting-started', 'clients', 'groups', 'oauth', 'operations'] as const;
export type DocPageId = (typeof docPageIds)[number];

export const isDocPageId = (id: string | undefined): id is DocPageId => docPageIds.includes(id as DocPageId);

export const docPath = (id: DocPageId): string => `/docs/${id}`;

interface DocPageMeta {
  title: string;
  summary: string;
}

/** Titles and one-line summaries for the page list; the text itself is in content/{language}/{id}.md. */
export const docPageMeta: Record<Language, Record<DocPageId, DocPageMeta>> = {
  en: {
    'getting-started': {
      title: 'Getting started',
      summary: 'Sign in, install a service from the Market or by hand, and find your API key.',
    },
    clients: {
      title: 'Connecting clients',
      summary: 'Claude Desktop, Claude Code, Cursor, VS Code, Cherry Studio, Windsurf, mcp-remote and the SDK.',
    },
    groups: {
      title: 'Groups',
      summary: 'Several services behind one endpoint: all tools or discovery, tool overrides and access lists.',
    },
    oauth: {
      title: 'OAuth',
      summary: 'Clients that sign in to Toolport instead of using a key, and remote services that need OAuth.',
    },
    operations: {
      title: 'Operations',
      summary: 'Environment, PostgreSQL and Redis replicas, backups, secret rotation, import and export, limits, logs.',
    },
  },
  'zh-CN': {
    'getting-started': {
      title: '快速上手',
      summary: '登录、从服务市场或手动安装服务，以及找到你的 API 密钥。',
    },
    clients: {
      title: '连接客户端',
      summary: 'Claude 桌面版、Claude Code、Cursor、VS Code、Cherry Studio、Windsurf、mcp-remote 和官方 SDK。',
    },
    groups: {
      title: '分组',
      summary: '一个端点汇集多个服务：全部工具或发现模式、工具设置与访问权限。',
    },
    oauth: {
      title: 'OAuth',
      summary: '客户端登录 Toolport 而无需密钥，以及需要 OAuth 授权的远程服务。',
    },
    operations: {
      title: '运维',
      summary: '环境变量、PostgreSQL 与 Redis 多副本、备份、密钥轮换、导入导出、限流和日志。',
    },
  },
};

/** Each page's text, one chunk per page and language, fetched only when that page is opened. */
const loaders = import.meta.glob<string>('./content/*/*.md', { query: '?raw', import: 'default' });

export function loadDocPage(language: Language, id: DocPageId): Promise<string> {
  const load = loaders[`./content/${language}/${id}.md`];
  if (!load) return Promise.reject(new Error(`no documentation page ${language}/${id}`));
  return load();
}
