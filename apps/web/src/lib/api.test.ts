import { routes } from '@toolport/contract';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { fail, fakeApi, ok, storeSession } from '../test/fake-api';
import { API_TIMEOUT_MS, ApiError, api, call, setApiHooks } from './api';

const hooks = { notify: vi.fn(), signedOut: vi.fn() };

async function failure(call: Promise<unknown>): Promise<ApiError> {
  const err = await call.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApiError);
  return err as ApiError;
}

describe('API client', () => {
  beforeEach(() => {
    hooks.notify.mockReset();
    hooks.signedOut.mockReset();
    setApiHooks(hooks);
    document.documentElement.lang = 'zh-CN';
  });
  afterEach(() => setApiHooks({ notify: () => {}, signedOut: () => {} }));

  it('sends the stored token, the page language and JSON, and returns the envelope data', async () => {
    storeSession();
    const server = fakeApi({ 'PUT /api/things': (req) => ok({ echoed: req.body }) });

    await expect(api('/things', { method: 'PUT', body: { a: 1 }, query: { p: 2, skip: undefined } })).resolves.toEqual({
      echoed: { a: 1 },
    });
    const [req] = server.calls;
    expect(req?.headers.get('authorization')).toBe('Bearer access-1');
    expect(req?.headers.get('accept-language')).toBe('zh-CN');
    expect(req?.headers.get('content-type')).toBe('application/json');
    expect(req?.url.search).toBe('?p=2');
    expect(hooks.notify).not.toHaveBeenCalled();
  });

  it('sends no Authorization header without a token, nor for auth: false calls', async () => {
    const server = fakeApi({ 'GET /api/open': () => ok(1) });
    await api('/open');
    storeSession();
    await api('/open', { auth: false });
    expect(server.calls.map((c) => c.headers.get('authorization'))).toEqual([null, null]);
  });

  it.each([
    [403, 'forbidden'],
    [404, 'notFound'],
    [500, 'server'],
    [503, 'server'],
    [400, 'other'],
    [409, 'other'],
  ] as const)('a %i answer shows the %s toast with the server message', async (status, kind) => {
    fakeApi({ 'GET /api/x': () => fail(status, `server says ${status}`, 'some_code') });
    const err = await failure(api('/x'));
    expect(err).toMatchObject({ status, kind, serverMessage: `server says ${status}`, code: 'some_code' });
    expect(hooks.notify).toHaveBeenCalledExactlyOnceWith(kind, `server says ${status}`);
    expect(hooks.signedOut).not.toHaveBeenCalled();
  });

  it('a failure without a message passes none, so the toast falls back to its own text', async () => {
    fakeApi({ 'GET /api/x': () => ({ status: 422, body: null }) });
    await failure(api('/x'));
    expect(hooks.notify).toHaveBeenCalledWith('other', undefined);
  });

  it('no answer at all shows the network toast', async () => {
    fakeApi({ 'GET /api/x': () => 'network-error' });
    const err = await failure(api('/x'));
    expect(err).toMatchObject({ status: 0, kind: 'network' });
    expect(hooks.notify).toHaveBeenCalledExactlyOnceWith('network', undefined);
  });

  it('gives up after 30 seconds and reports a network failure', async () => {
    vi.useFakeTimers();
    let aborted = false;
    vi.stubGlobal(
      'fetch',
      vi.fn(
        (_url: string, init: RequestInit) =>
          new Promise((_resolve, reject) => {
            init.signal?.addEventListener('abort', () => {
              aborted = true;
              reject(new DOMException('aborted', 'AbortError'));
            });
          }),
      ),
    );
    const call = failure(api('/slow'));
    await vi.advanceTimersByTimeAsync(API_TIMEOUT_MS - 1);
    expect(aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(await call).toMatchObject({ kind: 'network' });
    expect(hooks.notify).toHaveBeenCalledWith('network', undefined);
  });

  it('a call its caller cancels shows nothing', async () => {
    vi.stubGlobal(
      'fetch',
      vi.fn(
        (_url: string, init: RequestInit) =>
          new Promise((_resolve, reject) =>
            init.signal?.addEventListener('abort', () => reject(new DOMException('aborted', 'AbortError'))),
          ),
      ),
    );
    const controller = new AbortController();
    const call = failure(api('/x', { signal: controller.signal }));
    controller.abort();
    expect(await call).toMatchObject({ kind: 'aborted' });
    expect(hooks.notify).not.toHaveBeenCalled();
  });

  it('notify: false leaves the failure to the screen', async () => {
    fakeApi({ 'GET /api/x': () => fail(500, 'boom') });
    await failure(api('/x', { notify: false }));
    expect(hooks.notify).not.toHaveBeenCalled();
  });

  describe('401', () => {
    it('renews an expired access token once with the refresh token and retries the call', async () => {
      storeSession({}, 'expired', 'refresh-1');
      const server = fakeApi({
        'GET /api/x': (req) => (req.headers.get('authorization') === 'Bearer fresh' ? ok('done') : fail(401, 'expired')),
        'POST /api/auth/refresh': (req) =>
          (req.body as { refresh_token: string }).refresh_token === 'refresh-1'
            ? ok({ access_token: 'fresh', refresh_token: 'refresh-2', user: { id: 7, username: 'alice', display_name: '', role: 1 } })
            : fail(401),
      });

      await expect(api('/x')).resolves.toBe('done');
      expect(localStorage.getItem('token')).toBe('fresh');
      expect(localStorage.getItem('refresh_token')).toBe('refresh-2');
      expect(server.callsTo('POST', '/api/auth/refresh')).toHaveLength(1);
      expect(server.callsTo('GET', '/api/x')).toHaveLength(2);
      expect(hooks.signedOut).not.toHaveBeenCalled();
      expect(hooks.notify).not.toHaveBeenCalled();
    });

    it('calls that fail together share one refresh (refresh tokens are single-use)', async () => {
      storeSession({}, 'expired', 'refresh-1');
      const server = fakeApi({
        'GET /api/a': (req) => (req.headers.get('authorization') === 'Bearer fresh' ? ok('a') : fail(401)),
        'GET /api/b': (req) => (req.headers.get('authorization') === 'Bearer fresh' ? ok('b') : fail(401)),
        'POST /api/auth/refresh': () => ok({ access_token: 'fresh', refresh_token: 'refresh-2', user: { id: 7, username: 'alice' } }),
      });
      await expect(Promise.all([api('/a'), api('/b')])).resolves.toEqual(['a', 'b']);
      expect(server.callsTo('POST', '/api/auth/refresh')).toHaveLength(1);
    });

    it('when the refresh is refused too, clears token, refresh_token and user and signs out', async () => {
      storeSession({}, 'expired', 'revoked');
      const server = fakeApi({ 'GET /api/x': () => fail(401, 'expired'), 'POST /api/auth/refresh': () => fail(401, 'revoked') });

      const err = await failure(api('/x'));
      expect(err.kind).toBe('unauthorized');
      expect(server.callsTo('POST', '/api/auth/refresh')).toHaveLength(1);
      expect(server.callsTo('GET', '/api/x')).toHaveLength(1);
      expect([localStorage.getItem('token'), localStorage.getItem('refresh_token'), localStorage.getItem('user')]).toEqual([
        null,
        null,
        null,
      ]);
      expect(hooks.signedOut).toHaveBeenCalledOnce();
      expect(hooks.notify).not.toHaveBeenCalled();
    });

    it('a retried call that still gets 401 signs out without a second refresh', async () => {
      storeSession({}, 'expired', 'refresh-1');
      const server = fakeApi({
        'GET /api/x': () => fail(401),
        'POST /api/auth/refresh': () => ok({ access_token: 'fresh', refresh_token: 'refresh-2', user: { id: 7, username: 'alice' } }),
      });
      await failure(api('/x'));
      expect(server.callsTo('POST', '/api/auth/refresh')).toHaveLength(1);
      expect(server.callsTo('GET', '/api/x')).toHaveLength(2);
      expect(hooks.signedOut).toHaveBeenCalledOnce();
      expect(localStorage.getItem('token')).toBeNull();
    });

    it('without a refresh token signs out at once', async () => {
      localStorage.setItem('token', 'expired');
      const server = fakeApi({ 'GET /api/x': () => fail(401) });
      await failure(api('/x'));
      expect(server.callsTo('POST', '/api/auth/refresh')).toHaveLength(0);
      expect(hooks.signedOut).toHaveBeenCalledOnce();
    });

    it('is an ordinary failure for calls without a session (a wrong password)', async () => {
      storeSession();
      fakeApi({ 'POST /api/auth/login': () => fail(401, 'Incorrect username or password') });
      const err = await failure(api('/auth/login', { method: 'POST', body: {}, auth: false }));
      expect(err.serverMessage).toBe('Incorrect username or password');
      expect(hooks.signedOut).not.toHaveBeenCalled();
      expect(hooks.notify).toHaveBeenCalledWith('other', 'Incorrect username or password');
      expect(localStorage.getItem('token')).toBe('access-1');
    });
  });

  it('calls an endpoint of the table by its method and path, with the params filled in and encoded', async () => {
    storeSession();
    const server = fakeApi({
      'PUT /api/mcp_services/7': (req) => ok(undefined, `saved ${JSON.stringify(req.body)}`),
      'GET /api/mcp_market/install_status/a%2Fb': () => ok({ status: 'completed' }),
      'GET /api/user/search': (req) => ok([{ keyword: req.url.searchParams.get('keyword') }]),
    });

    await call(routes.services.update, { params: { id: 7 }, body: { rpd_limit: 5 } });
    await expect(call(routes.services.installStatus, { params: { taskId: 'a/b' } })).resolves.toEqual({ status: 'completed' });
    await expect(call(routes.users.search, { query: { keyword: 'ann' } })).resolves.toEqual([{ keyword: 'ann' }]);
    expect(server.calls.map((c) => [c.method, c.url.pathname, c.body])).toEqual([
      ['PUT', '/api/mcp_services/7', { rpd_limit: 5 }],
      ['GET', '/api/mcp_market/install_status/a%2Fb', undefined],
      ['GET', '/api/user/search', undefined],
    ]);
    expect(server.calls[0]?.headers.get('authorization')).toBe('Bearer access-1');
  });
});
