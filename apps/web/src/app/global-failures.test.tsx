import { act, screen } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { api } from '../lib/api';
import { notify, TOAST_DURATION_MS } from '../lib/notify';
import { fail, fakeApi, storeSession } from '../test/fake-api';
import { renderApp, renderWithProviders } from '../test/render';

const swallow = (call: Promise<unknown>) => call.catch(() => undefined);

describe('toasts', () => {
  it('show one at a time: a new toast replaces the one on screen', async () => {
    await renderWithProviders(<p>page</p>);
    act(() => notify.error('First failure', 'first reason'));
    expect(await screen.findByText('First failure')).toBeInTheDocument();

    act(() => notify.success('Second message'));
    expect(await screen.findByText('Second message')).toBeInTheDocument();
    await vi.waitFor(() => expect(screen.queryByText('First failure')).not.toBeInTheDocument());
  });

  it('disappear after five seconds', async () => {
    await renderWithProviders(<p>page</p>);
    vi.useFakeTimers({ shouldAdvanceTime: true });
    act(() => notify.error('Short-lived'));
    expect(await screen.findByText('Short-lived')).toBeInTheDocument();

    await act(() => vi.advanceTimersByTimeAsync(TOAST_DURATION_MS - 500));
    expect(screen.getByText('Short-lived')).toBeInTheDocument();
    await act(() => vi.advanceTimersByTimeAsync(1_500));
    await vi.waitFor(() => expect(screen.queryByText('Short-lived')).not.toBeInTheDocument());
  });
});

describe('global handling of failed calls (docs/console.md §8)', () => {
  it.each([
    [403, '无权限', '权限不足：你没有执行此操作的权限'],
    [404, '请求失败', '请求的资源不存在'],
    [500, '服务器错误', '服务器错误，请稍后重试'],
  ])('in Chinese, %i shows %s', async (status, title, description) => {
    localStorage.setItem('i18nextLng', 'zh-CN');
    fakeApi({ 'GET /api/x': () => fail(status, 'raw server text') });
    await renderWithProviders(<p>page</p>);
    await act(() => swallow(api('/x')));
    expect(await screen.findByText(title)).toBeInTheDocument();
    expect(screen.getByText(description)).toBeInTheDocument();
  });

  it.each([
    [403, 'Permission denied', 'Permission denied: you do not have permission to perform this action'],
    [404, 'Request failed', 'The requested resource does not exist'],
    [500, 'Server error', 'Server error, please retry later'],
  ])('in English, %i shows %s', async (status, title, description) => {
    fakeApi({ 'GET /api/x': () => fail(status) });
    await renderWithProviders(<p>page</p>);
    await act(() => swallow(api('/x')));
    expect(await screen.findByText(title)).toBeInTheDocument();
    expect(screen.getByText(description)).toBeInTheDocument();
  });

  it("other statuses show 'Request failed' with the server's message, or 'Unknown error'", async () => {
    fakeApi({ 'GET /api/named': () => fail(409, 'name already taken'), 'GET /api/silent': () => ({ status: 418, body: {} }) });
    await renderWithProviders(<p>page</p>);
    await act(() => swallow(api('/named')));
    expect(await screen.findByText('name already taken')).toBeInTheDocument();
    expect(screen.getByText('Request failed')).toBeInTheDocument();

    await act(() => swallow(api('/silent')));
    expect(await screen.findByText('Unknown error')).toBeInTheDocument();
  });

  it('no answer shows the network message', async () => {
    fakeApi({ 'GET /api/x': () => 'network-error' });
    await renderWithProviders(<p>page</p>);
    await act(() => swallow(api('/x')));
    expect(await screen.findByText('Network error: please check your network connection')).toBeInTheDocument();
  });

  it('a 401 that a refresh cannot fix clears the session and opens the sign-in page, remembering the page', async () => {
    storeSession({}, 'expired', 'revoked');
    fakeApi({
      'GET /api/analytics/services/utilization': () => fail(401, 'expired'),
      'GET /api/user/self': () => fail(401, 'expired'),
      'POST /api/auth/refresh': () => fail(401, 'revoked'),
    });
    const { router } = await renderApp('/analytics');

    expect(await screen.findByRole('heading', { name: 'Sign in to Toolport' })).toBeInTheDocument();
    expect(router.state.location.pathname).toBe('/login');
    expect(router.state.location.state).toMatchObject({ from: '/analytics' });
    // Whichever got there first (the page guard or the API client), the page says the session ended.
    expect(screen.getByRole('status')).toHaveTextContent('Your session ended. Sign in again to continue where you were.');
    expect(localStorage.getItem('token')).toBeNull();
    expect(localStorage.getItem('refresh_token')).toBeNull();
    expect(localStorage.getItem('user')).toBeNull();
  });
});
