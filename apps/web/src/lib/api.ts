import {
  type ApiEnvelope,
  type BodyOf,
  type DataOf,
  type Endpoint,
  type EndpointOf,
  type ParamsOf,
  pathOf,
  type QueryOf,
  type Route,
} from '@toolport/contract';
import { refreshSession } from './refresh';
import { clearSession, getToken } from './session';

/** How a call failed, which decides the global toast (docs/console.md §8). */
export type FailureKind = 'unauthorized' | 'forbidden' | 'notFound' | 'server' | 'other' | 'network' | 'aborted';

/**
 * A failed API call: the HTTP status (0 when no answer came), how it failed, and the server's own
 * localised `message` and machine-readable `code` when it sent them.
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly kind: FailureKind,
    readonly serverMessage?: string,
    readonly code?: string,
    readonly data?: unknown,
    /** The request's field the server's refusal is about, when it named one (decision 0058). */
    readonly field?: string,
  ) {
    super(serverMessage || (status ? `HTTP ${status}` : kind));
    this.name = 'ApiError';
  }
}

/** The server's message of a failed call, or `fallback` (translated by the caller) when it sent none. */
export function messageOf(err: unknown, fallback: string): string {
  return err instanceof ApiError && err.serverMessage ? err.serverMessage : fallback;
}

export const API_TIMEOUT_MS = 30_000;

export interface ApiOptions {
  method?: 'GET' | 'POST' | 'PUT' | 'DELETE';
  body?: unknown;
  query?: Record<string, string | number | undefined>;
  signal?: AbortSignal;
  /**
   * Send the stored access token and treat 401 as the end of the session (refresh once, else sign out).
   * False for the calls that create a session (sign-in, OAuth) and for public ones.
   */
  auth?: boolean;
  /** Show the global failure toast. False when the screen shows its own message for the failure. */
  notify?: boolean;
}

/** What the app plugs in: the toast for a failure and the way to the sign-in page. */
export interface ApiHooks {
  notify(kind: Exclude<FailureKind, 'unauthorized' | 'aborted'>, serverMessage: string | undefined): void;
  signedOut(): void;
}

let hooks: ApiHooks = { notify: () => {}, signedOut: () => {} };

export function setApiHooks(next: ApiHooks): void {
  hooks = next;
}

function kindOf(status: number): Exclude<FailureKind, 'aborted' | 'network'> {
  if (status === 401) return 'unauthorized';
  if (status === 403) return 'forbidden';
  if (status === 404) return 'notFound';
  if (status >= 500) return 'server';
  return 'other';
}

function urlOf(path: string, query: ApiOptions['query']): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query ?? {})) {
    if (value !== undefined) params.set(key, String(value));
  }
  const search = params.toString();
  return `/api${path}${search ? `?${search}` : ''}`;
}

/** One fetch with the console's headers and the 30 s timeout; a missing answer becomes a `network` ApiError. */
async function send(path: string, options: ApiOptions, token: string | null): Promise<Response> {
  const headers = new Headers({ Accept: 'application/json' });
  // i18n keeps <html lang> on the current language, so server messages come back in it.
  headers.set('Accept-Language', document.documentElement.lang || 'en');
  if (token) headers.set('Authorization', `Bearer ${token}`);
  if (options.body !== undefined) headers.set('Content-Type', 'application/json');

  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), API_TIMEOUT_MS);
  const forwardAbort = () => controller.abort();
  options.signal?.addEventListener('abort', forwardAbort);
  try {
    return await fetch(urlOf(path, options.query), {
      method: options.method ?? 'GET',
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      signal: controller.signal,
    });
  } catch (err) {
    if (options.signal?.aborted) throw new ApiError(0, 'aborted');
    const error = new ApiError(0, 'network', undefined, undefined, err);
    if (options.notify !== false) hooks.notify('network', undefined);
    throw error;
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', forwardAbort);
  }
}

/**
 * Calls `/api{path}` and returns the envelope's `data`. Failures are shown globally (docs/console.md §8) unless
 * `notify` is false; a 401 on an authenticated call first tries one token refresh and a retry, and if that
 * does not help, clears the session and sends the user to the sign-in page.
 */
export async function api<T>(path: string, options: ApiOptions = {}): Promise<T> {
  return (await apiEnvelope<T>(path, options)).data;
}

/** What went partly wrong in a success: a search whose sources did not all answer (the envelope's `warnings`). */
export interface ApiWarning {
  source?: string;
  message: string;
}

/** `api`, with the envelope's `warnings` beside the data. */
export async function apiEnvelope<T>(path: string, options: ApiOptions = {}): Promise<{ data: T; warnings: ApiWarning[] }> {
  const authed = options.auth !== false;
  const sentToken = authed ? getToken() : null;
  let res = await send(path, options, sentToken);
  if (res.status === 401 && authed && sentToken) {
    const token = await refreshSession(sentToken);
    if (token) res = await send(path, options, token);
  }

  const body = (await res.json().catch(() => null)) as Partial<ApiEnvelope<T>> | null;
  if (res.ok && body?.success !== false) return { data: body?.data as T, warnings: body?.warnings ?? [] };

  const kind = kindOf(res.status);
  if (kind === 'unauthorized' && authed) {
    clearSession();
    hooks.signedOut();
  } else if (options.notify !== false) {
    // A 401 of a call without a session (a wrong password, say) is an ordinary failure.
    hooks.notify(kind === 'unauthorized' ? 'other' : kind, body?.message);
  }
  throw new ApiError(res.status, kind, body?.message || undefined, body?.code, body?.data, body?.field);
}

/** An option the endpoint requires, may take, or does not take, by its type. */
type Field<K extends string, T> = [T] extends [undefined] ? { [P in K]?: never } : object extends T ? { [P in K]?: T } : { [P in K]: T };

/** Path parameters are text in the URL: a number is as good as its digits. */
type PathParams<P> = [P] extends [undefined] ? undefined : { [K in keyof P]: string | number };

/** What a call of `E` takes: its path parameters, query and body as its schemas read them, and the usual options. */
export type CallOptions<E extends Endpoint> = Field<'params', PathParams<ParamsOf<E>>> &
  Field<'query', QueryOf<E>> &
  Field<'body', BodyOf<E>> &
  Pick<ApiOptions, 'signal' | 'auth' | 'notify'>;

type CallArgs<E extends Endpoint> = object extends CallOptions<E> ? [options?: CallOptions<E>] : [options: CallOptions<E>];

/**
 * Calls an endpoint of the contract's table (`routes.services.toggle`, say) and returns its answer's `data`,
 * typed by the endpoint's schemas; params fill the path's placeholders. Otherwise the same as `api`.
 */
export function call<R extends Route>(route: R, ...[options]: CallArgs<EndpointOf<R>>): Promise<DataOf<EndpointOf<R>>> {
  const { params, query, body, ...rest } = (options ?? {}) as {
    params?: Record<string, string | number>;
    query?: ApiOptions['query'];
    body?: unknown;
  } & Pick<ApiOptions, 'signal' | 'auth' | 'notify'>;
  return api(pathOf(route, params), { ...rest, method: route.method, query, body });
}

/** `call`, with the answer's `warnings` beside its data (an empty list when it has none). */
export function callWithWarnings<R extends Route>(
  route: R,
  ...[options]: CallArgs<EndpointOf<R>>
): Promise<{ data: DataOf<EndpointOf<R>>; warnings: ApiWarning[] }> {
  const { params, query, body, ...rest } = (options ?? {}) as {
    params?: Record<string, string | number>;
    query?: ApiOptions['query'];
    body?: unknown;
  } & Pick<ApiOptions, 'signal' | 'auth' | 'notify'>;
  return apiEnvelope(pathOf(route, params), { ...rest, method: route.method, query, body });
}

/**
 * A file an endpoint answers (JSON lines, say), as a Blob: the same headers, timeout, token refresh and failure
 * handling as `call`, for a body that is not the JSON envelope.
 */
export async function callFile<R extends Route>(
  route: R,
  query: ApiOptions['query'] = {},
  options: Pick<ApiOptions, 'notify'> = {},
): Promise<Blob> {
  const sentToken = getToken();
  const opts: ApiOptions = { method: route.method, query, ...options };
  let res = await send(pathOf(route), opts, sentToken);
  if (res.status === 401 && sentToken) {
    const token = await refreshSession(sentToken);
    if (token) res = await send(pathOf(route), opts, token);
  }
  if (res.ok) return res.blob();
  const body = (await res.json().catch(() => null)) as Partial<ApiEnvelope<unknown>> | null;
  const kind = kindOf(res.status);
  if (kind === 'unauthorized') {
    clearSession();
    hooks.signedOut();
  } else if (options.notify !== false) hooks.notify(kind, body?.message);
  throw new ApiError(res.status, kind, body?.message || undefined, body?.code, body?.data);
}
