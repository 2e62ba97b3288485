import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';
import * as leave from '../../lib/leave';
import { fail, fakeApi, ok, selfUser, storeSession } from '../../test/fake-api';
import { renderApp } from '../../test/render';

const request = {
  client_id: 'tpc_abc',
  client_name: 'Claude',
  redirect_host: 'claude.ai',
  logo_uri: '',
  resource: 'https://mcp.example.com/proxy/time/mcp',
  endpoint: { kind: 'proxy', name: 'time' },
  allowed: true,
};

describe('MCP client consent page', () => {
  afterEach(() => vi.restoreAllMocks());

  it('shows who asks for what, and Allow sends the browser back with the server’s answer', async () => {
    storeSession();
    const server = fakeApi({
      'GET /api/user/self': () => ok(selfUser()),
      'GET /api/oauth-server/requests/req-1': () => ok(request),
      'POST /api/oauth-server/requests/req-1': () => ok({ redirect_to: 'https://claude.ai/cb?code=c&state=s' }),
    });
    const left = vi.spyOn(leave, 'leaveTo').mockImplementation(() => undefined);
    await renderApp('/oauth/consent?request=req-1');
    expect(await screen.findByRole('heading', { name: 'Claude wants to use your Toolport account' })).toBeInTheDocument();
    expect(screen.getByText('The MCP service time')).toBeInTheDocument();
    expect(screen.getByText('claude.ai')).toBeInTheDocument();
    await userEvent.setup().click(screen.getByRole('button', { name: 'Allow' }));
    await vi.waitFor(() => expect(left).toHaveBeenCalledWith('https://claude.ai/cb?code=c&state=s'));
    expect(server.callsTo('POST', '/api/oauth-server/requests/req-1')[0]?.body).toEqual({ allow: true });
  });

  it('offers only Deny (拒绝) for an endpoint the user may not use, in Chinese', async () => {
    localStorage.setItem('i18nextLng', 'zh-CN');
    storeSession();
    const server = fakeApi({
      'GET /api/user/self': () => ok(selfUser()),
      'GET /api/oauth-server/requests/req-2': () => ok({ ...request, allowed: false, endpoint: { kind: 'all' } }),
      'POST /api/oauth-server/requests/req-2': () => ok({ redirect_to: 'https://claude.ai/cb?error=access_denied' }),
    });
    const left = vi.spyOn(leave, 'leaveTo').mockImplementation(() => undefined);
    await renderApp('/oauth/consent?request=req-2');
    expect(await screen.findByText('你的全部 MCP 端点')).toBeInTheDocument();
    expect(screen.getByRole('button', { name: '允许' })).toBeDisabled();
    await userEvent.setup().click(screen.getByRole('button', { name: '拒绝' }));
    await vi.waitFor(() => expect(left).toHaveBeenCalledWith('https://claude.ai/cb?error=access_denied'));
    expect(server.callsTo('POST', '/api/oauth-server/requests/req-2')[0]?.body).toEqual({ allow: false });
  });

  it('says why Allow is not offered: the access list of a service (en) or of a group (zh-CN), or an endpoint that is gone', async () => {
    const cases = [
      {
        lang: 'en',
        view: { refusal: 'no_access', endpoint: { kind: 'proxy', name: 'vault' } },
        text: 'Your account is not on the access list of the MCP service vault. Ask an administrator for access, or Deny to send the app back.',
        allow: 'Allow',
      },
      {
        lang: 'zh-CN',
        view: { refusal: 'no_access', endpoint: { kind: 'group', name: 'finance' } },
        text: '你的账户不在 MCP 分组 finance 的访问名单中。请向管理员申请访问权限，或点击拒绝，让应用返回。',
        allow: '允许',
      },
      {
        lang: 'en',
        view: { refusal: 'unknown_endpoint', endpoint: { kind: 'proxy', name: 'gone' } },
        text: 'The MCP service gone does not exist or is switched off. Deny to send the app back.',
        allow: 'Allow',
      },
    ];
    for (const [i, c] of cases.entries()) {
      localStorage.setItem('i18nextLng', c.lang);
      storeSession();
      fakeApi({
        'GET /api/user/self': () => ok(selfUser()),
        [`GET /api/oauth-server/requests/why-${i}`]: () => ok({ ...request, allowed: false, ...c.view }),
      });
      const { unmount } = await renderApp(`/oauth/consent?request=why-${i}`);
      const alert = await screen.findByRole('alert');
      expect(alert).toHaveTextContent(c.text);
      expect(screen.getByRole('button', { name: c.allow })).toBeDisabled();
      unmount();
    }
  });

  it('explains an expired or answered request with the server’s message', async () => {
    localStorage.setItem('i18nextLng', 'en');
    storeSession();
    fakeApi({
      'GET /api/user/self': () => ok(selfUser()),
      'GET /api/oauth-server/requests/gone': () => fail(404, 'This authorization request is unknown, expired or already answered'),
    });
    await renderApp('/oauth/consent?request=gone');
    const alert = await screen.findByRole('alert');
    expect(within(alert).getByText(/already answered/)).toBeInTheDocument();
    expect(screen.queryByRole('button', { name: 'Allow' })).not.toBeInTheDocument();
  });
});
