import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Link, useLocation, useNavigate, useRouteError } from 'react-router';
import { Button } from '../components/ui/button';
import { useDocumentTitle } from '../lib/use-document-title';
import { isChunkLoadError, reloadOnceForNewBuild } from './chunk-reload';

/**
 * What a page shows instead of the router's developer screen when its code cannot load or it fails while
 * rendering (issue 15, item 5). `frame` is the layout-level boundary: the layout itself failed, so this
 * screen stands alone; otherwise it fills the page's place inside the layout and the sidebar stays usable.
 */
export function RouteError({ frame = false }: { frame?: boolean }) {
  const error = useRouteError();
  const { t } = useTranslation();
  const navigate = useNavigate();
  const location = useLocation();
  const chunk = isChunkLoadError(error);
  const [reloading, setReloading] = useState(chunk);
  useDocumentTitle(t(chunk ? 'routeError.chunkTitle' : 'routeError.title'));

  useEffect(() => {
    // After an upgrade the old build's chunks are gone: one reload fetches the new index.html and its chunks.
    if (chunk) setReloading(reloadOnceForNewBuild());
    else console.error(error);
  }, [chunk, error]);

  const retry = () => {
    // A module that failed to load stays failed in this document; only a reload asks the server again.
    if (chunk) window.location.reload();
    else navigate(location, { replace: true });
  };

  if (reloading) return null;
  const body = (
    <section role="alert" aria-labelledby="route-error-title" className="space-y-4">
      <h1 id="route-error-title" className="text-2xl font-semibold">
        {t(chunk ? 'routeError.chunkTitle' : 'routeError.title')}
      </h1>
      <p className="text-slate-600 dark:text-slate-300">{t(chunk ? 'routeError.chunkDescription' : 'routeError.description')}</p>
      <div className="flex flex-wrap gap-2">
        <Button onClick={retry}>{t('routeError.retry')}</Button>
        <Button variant="outline" asChild>
          <Link to="/" reloadDocument={frame}>
            {t('notFound.home')}
          </Link>
        </Button>
      </div>
    </section>
  );
  if (!frame) return body;
  return (
    <main id="main" className="mx-auto min-h-dvh max-w-2xl px-4 py-12">
      {body}
    </main>
  );
}
