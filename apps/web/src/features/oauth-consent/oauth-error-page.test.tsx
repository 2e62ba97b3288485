import { screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { fakeApi } from '../../test/fake-api';
import { renderApp } from '../../test/render';

describe('OAuth error page', () => {
  it('explains a refused authorization request without a sign-in, from its own texts only', async () => {
    fakeApi({});
    await renderApp('/oauth/error?error=invalid_request&reason=redirect_mismatch');
    expect(await screen.findByRole('heading', { name: 'This sign-in link cannot be used' })).toBeInTheDocument();
    expect(screen.getByRole('alert')).toHaveTextContent('The address the app wants to return to is not one it registered.');
    expect(screen.getByRole('alert')).toHaveTextContent('Error code: invalid_request');
    expect(screen.getByRole('link', { name: 'Go to Toolport' })).toHaveAttribute('href', '/');
  });

  it('shows nothing of a crafted link: unknown reasons and codes read as the generic text', async () => {
    fakeApi({});
    await renderApp('/oauth/error?error=%3Cimg%20src%3Dx%3E&reason=Call%20%2B1-555%20to%20fix');
    expect(await screen.findByRole('alert')).toHaveTextContent('The app that sent you here made a request Toolport cannot accept.');
    expect(document.body.textContent).not.toContain('555');
    expect(document.body.textContent).not.toContain('<img');
    expect(document.querySelector('img')).toBeNull();
  });

  it('speaks Chinese to a reader who chose it', async () => {
    localStorage.setItem('i18nextLng', 'zh-CN');
    fakeApi({});
    await renderApp('/oauth/error?error=invalid_client&reason=metadata_unusable');
    expect(await screen.findByRole('heading', { name: '无法使用此登录链接' })).toBeInTheDocument();
    expect(screen.getByRole('alert')).toHaveTextContent('无法获取或使用该应用的元数据文档（其客户端 ID URL）。');
    expect(screen.getByRole('alert')).toHaveTextContent('错误代码: invalid_client');
  });
});
