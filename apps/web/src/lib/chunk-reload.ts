/**
 * A page's code split into chunks whose names carry a hash of their content (Vite): a server restarted with a
 * new build no longer has the chunks an open tab still asks for, and a blinking network fails the same import.
 * Browsers word the failure differently; these are Chromium's, Firefox's and Safari's.
 */
const CHUNK_FAILURE =
  /Failed to fetch dynamically imported module|error loading dynamically imported module|Importing a module script failed|Unable to preload CSS/i;

export function isChunkLoadError(error: unknown): boolean {
  return error instanceof Error && CHUNK_FAILURE.test(error.message);
}

const KEY = 'chunk-reload-at';
/** A second failure within this time means the chunk is missing in the current build too: no reload loop. */
const WINDOW_MS = 30_000;

/**
 * Reloads the document once so the browser fetches the current index.html and its chunks. Returns false
 * when a reload for this reason happened moments ago (the chunk is missing in the new build as well, or the
 * network is down): the caller then shows the error with a Retry button instead.
 */
let requested = false;

export function reloadOnceForNewBuild(
  now = Date.now(),
  storage: Storage = sessionStorage,
  reload = () => window.location.reload(),
): boolean {
  // React may run the caller's effect twice (StrictMode): the reload already asked for still counts.
  if (requested) return true;
  const last = Number(storage.getItem(KEY) ?? 0);
  if (now - last < WINDOW_MS) return false;
  storage.setItem(KEY, String(now));
  requested = true;
  reload();
  return true;
}

/**
 * Whether Toolport answers at all: a chunk that could not be fetched because nothing answers (the server is down,
 * the network is gone) is not a new build, and reloading would leave the console for the browser's error page.
 * Any answer counts, but a proxy's 502, 503 or 504 (the server behind it is down). index.html is never cached.
 */
export async function serverAnswers(fetcher: typeof fetch = (...args) => fetch(...args), timeoutMs = 5_000): Promise<boolean> {
  try {
    const answer = await fetcher('/', { method: 'HEAD', cache: 'no-store', signal: AbortSignal.timeout(timeoutMs) });
    return answer.status < 502 || answer.status > 504;
  } catch {
    return false;
  }
}
