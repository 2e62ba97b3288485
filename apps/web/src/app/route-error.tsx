import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Link, useLocation, useNavigate, useRouteError } from 'react-router';
import { Button } from '../components/ui/button';
import { isChunkLoadError, reloadOnceForNewBuild, serverAnswers } from '../lib/chunk-reload';
import { useDocumentTitle } from '../lib/use-document-title';

/** What a page whose code did not arrive shows: nothing while it asks the server, then a reload or a message. */
type ChunkState = 'probing' | 'reloading' | 'missing' | 'offline' | 'retrying';

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
  const [state, setState] = useState<ChunkState | undefined>(chunk ? 'probing' : undefined);
  const [stillOffline, setStillOffline] = useState(false);
  const offline = state === 'offline' || state === 'retrying';
  const kind = offline ? 'offline' : chunk ? 'chunk' : 'render';
  const text = {
    render: { title: 'routeError.title', description: 'routeError.description' },
    chunk: { title: 'routeError.chunkTitle', description: 'routeError.chunkDescription' },
    offline: { title: 'routeError.offlineTitle', description: 'routeError.offlineDescription' },
  } as const;
  useDocumentTitle(t(text[kind].title));

  useEffect(() => {
    if (!chunk) {
      console.error(error);
      return;
    }
    let live = true;
    // A server that does not answer at all is down, not upgraded: a reload would replace the console with the
    // browser's "can't be reached" page, so the layout stays and says so (issue 29). After an upgrade the old
    // build's chunks are gone: one reload fetches the new index.html and its chunks.
    void serverAnswers().then((answers) => {
      if (!live) return;
      if (!answers) setState('offline');
      else setState(reloadOnceForNewBuild() ? 'reloading' : 'missing');
    });
    return () => {
      live = false;
    };
  }, [chunk, error]);

  const retry = async () => {
    if (!chunk) return navigate(location, { replace: true });
    if (offline) {
      setState('retrying');
      if (!(await serverAnswers())) {
        setStillOffline(true);
        return setState('offline');
      }
    }
    // A module that failed to load stays failed in this document; only a reload asks the server again.
    window.location.reload();
  };

  if (state === 'probing' || state === 'reloading') return null;
  const body = (
    <section role="alert" aria-labelledby="route-error-title" className="space-y-4" data-route-error={kind}>
      <h1 id="route-error-title" className="text-2xl font-semibold">
        {t(text[kind].title)}
      </h1>
      <p className="text-slate-600 dark:text-slate-300">{t(text[kind].description)}</p>
      {offline && stillOffline && state === 'offline' && (
        <p className="text-sm text-slate-600 dark:text-slate-300">{t('routeError.stillOffline')}</p>
      )}
      <div className="flex flex-wrap gap-2">
        <Button onClick={() => void retry()} disabled={state === 'retrying'}>
          {t(state === 'retrying' ? 'routeError.retrying' : 'routeError.retry')}
        </Button>
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
