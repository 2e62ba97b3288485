import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Link, NavLink, useParams } from 'react-router';
import { PageHeader } from '../../components/page-header';
import { ErrorAlert } from '../../components/ui/alert';
import { Button } from '../../components/ui/button';
import { Skeleton } from '../../components/ui/skeleton';
import { cn } from '../../lib/cn';
import { currentLanguage, type Language } from '../../lib/i18n';
import { DocMarkdown } from './doc-markdown';
import { type DocPageId, docPageIds, docPageMeta, docPath, isDocPageId, loadDocPage } from './pages';

/** The page list: every page in the reader's language, then the server's API reference. */
function DocsNav({ language }: { language: Language }) {
  const { t } = useTranslation();
  const linkClass = (active: boolean) =>
    cn(
      'block rounded-md px-3 py-2 text-sm hover:bg-slate-100 dark:hover:bg-slate-800',
      active ? 'bg-slate-100 font-medium text-teal-700 dark:bg-slate-800 dark:text-teal-400' : 'text-slate-700 dark:text-slate-300',
    );
  return (
    <nav aria-label={t('docs.pagesLabel')} className="lg:sticky lg:top-20 lg:self-start">
      <ul className="flex flex-wrap gap-1 lg:flex-col">
        <li>
          <NavLink to="/docs" end className={({ isActive }) => linkClass(isActive)}>
            {t('docs.overview')}
          </NavLink>
        </li>
        {docPageIds.map((id) => (
          <li key={id}>
            <NavLink to={docPath(id)} className={({ isActive }) => linkClass(isActive)}>
              {docPageMeta[language][id].title}
            </NavLink>
          </li>
        ))}
        <li>
          <a href="/api/docs" className={linkClass(false)}>
            {t('docs.apiReference')}
          </a>
        </li>
      </ul>
    </nav>
  );
}

/** /docs: what each page is about. */
function DocsOverview({ language }: { language: Language }) {
  const { t } = useTranslation();
  return (
    <article className="min-w-0 space-y-6">
      <PageHeader title={t('docs.title')} description={t('docs.description')} />
      <ul className="grid gap-3 sm:grid-cols-2">
        {docPageIds.map((id) => (
          <li key={id} className="rounded-lg border border-slate-200 p-4 dark:border-slate-800">
            <h2 className="font-semibold">
              <Link to={docPath(id)} className="text-teal-700 underline-offset-2 hover:underline dark:text-teal-400">
                {docPageMeta[language][id].title}
              </Link>
            </h2>
            <p className="mt-1 text-sm text-slate-600 dark:text-slate-400">{docPageMeta[language][id].summary}</p>
          </li>
        ))}
      </ul>
      <p className="text-sm text-slate-600 dark:text-slate-400">
        {t('docs.apiHint')}{' '}
        <a href="/api/docs" className="text-teal-700 underline underline-offset-2 dark:text-teal-400">
          {t('docs.apiReference')}
        </a>
      </p>
    </article>
  );
}

type Loaded = { key: string; markdown?: string; failed?: boolean };

/** /docs/{page}: one page, its text fetched in the reader's language (and again when the language changes). */
function DocArticle({ language, id }: { language: Language; id: DocPageId }) {
  const { t } = useTranslation();
  const key = `${language}/${id}`;
  const [loaded, setLoaded] = useState<Loaded>({ key: '' });
  const [attempt, setAttempt] = useState(0);
  // biome-ignore lint/correctness/useExhaustiveDependencies: a new attempt (Retry) loads the same page again
  useEffect(() => {
    let live = true;
    const loading = `${language}/${id}`;
    loadDocPage(language, id).then(
      (markdown) => live && setLoaded({ key: loading, markdown }),
      () => live && setLoaded({ key: loading, failed: true }),
    );
    return () => {
      live = false;
    };
  }, [language, id, attempt]);
  const current = loaded.key === key ? loaded : undefined;
  const index = docPageIds.indexOf(id);
  const previous = docPageIds[index - 1];
  const next = docPageIds[index + 1];
  return (
    <article className="min-w-0 space-y-6">
      <PageHeader title={docPageMeta[language][id].title} description={docPageMeta[language][id].summary} />
      {current?.markdown !== undefined ? (
        <DocMarkdown markdown={current.markdown} />
      ) : current?.failed ? (
        <ErrorAlert title={t('routeError.chunkTitle')}>
          <Button variant="outline" size="sm" className="mt-2" onClick={() => setAttempt((n) => n + 1)}>
            {t('routeError.retry')}
          </Button>
        </ErrorAlert>
      ) : (
        <div className="space-y-3">
          <Skeleton className="h-6 w-2/3" />
          <Skeleton className="h-24 w-full" />
        </div>
      )}
      <nav
        aria-label={t('docs.pagerLabel')}
        className="flex flex-wrap justify-between gap-3 border-t border-slate-200 pt-4 dark:border-slate-800"
      >
        {previous ? (
          <Link to={docPath(previous)} className="text-teal-700 underline-offset-2 hover:underline dark:text-teal-400">
            ← {docPageMeta[language][previous].title}
          </Link>
        ) : (
          <span />
        )}
        {next && (
          <Link to={docPath(next)} className="text-teal-700 underline-offset-2 hover:underline dark:text-teal-400">
            {docPageMeta[language][next].title} →
          </Link>
        )}
      </nav>
    </article>
  );
}

/** The Docs route (docs/console.md §2.1): the page list beside the overview or one page. */
export function DocsPage() {
  const { t, i18n } = useTranslation();
  const { page } = useParams();
  const language = currentLanguage(i18n);
  const known = isDocPageId(page);
  return (
    <div className="grid gap-6 lg:grid-cols-[13rem_minmax(0,1fr)] lg:gap-10">
      <DocsNav language={language} />
      {page === undefined ? (
        <DocsOverview language={language} />
      ) : known ? (
        <DocArticle language={language} id={page} />
      ) : (
        <section className="space-y-4">
          <PageHeader title={t('docs.notFound')} description={t('notFound.description')} />
          <Button asChild variant="outline">
            <Link to="/docs">{t('docs.overview')}</Link>
          </Button>
        </section>
      )}
    </div>
  );
}
