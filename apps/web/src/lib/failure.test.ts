import type { i18n } from 'i18next';
import { toast } from 'sonner';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { fail, fakeApi } from '../test/fake-api';
import { localeResources } from '../test/render';
import { API_TIMEOUT_MS, ApiError, api, setApiHooks } from './api';
import { describeFailure, failureText, LocalCheckError, showFailure } from './failure';
import { createI18n } from './i18n';

/** The error a real call ends with, against the fake server's answer. */
async function failureOf(call: Promise<unknown>): Promise<ApiError> {
  const err = await call.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApiError);
  return err as ApiError;
}

/** A call that no server answers: the 30 s timeout ends it. */
async function timedOut(): Promise<ApiError> {
  vi.useFakeTimers();
  vi.stubGlobal(
    'fetch',
    vi.fn(
      (_url: string, init: RequestInit) =>
        new Promise((_resolve, reject) => init.signal?.addEventListener('abort', () => reject(new DOMException('aborted', 'AbortError')))),
    ),
  );
  const call = failureOf(api('/slow', { notify: false }));
  await vi.advanceTimersByTimeAsync(API_TIMEOUT_MS);
  return call;
}

/** Texts of each language, as the locale files have them. */
const texts = {
  en: {
    networkTitle: 'Network error',
    network: 'Network error: please check your network connection',
    serverTitle: 'Server error',
    server: 'Server error, please retry later',
    forbiddenTitle: 'Permission denied',
    unknown: 'Unknown error',
    refused: 'A group with that name exists already',
  },
  'zh-CN': {
    networkTitle: '网络错误',
    network: '网络错误：请检查你的网络连接',
    serverTitle: '服务器错误',
    server: '服务器错误，请稍后重试',
    forbiddenTitle: '无权限',
    unknown: '未知错误',
    refused: '同名的分组已存在',
  },
} as const;

describe.each(Object.keys(texts) as (keyof typeof texts)[])('the failure policy in %s', (language) => {
  let i18n: i18n;
  const text = texts[language];
  const titles = { failed: 'Save failed', error: 'Save error', fallback: 'Nothing was saved' };

  beforeEach(async () => {
    localStorage.setItem('i18nextLng', language);
    i18n = await createI18n(localeResources);
    document.documentElement.lang = language;
    setApiHooks({ notify: () => {}, signedOut: () => {} });
  });
  afterEach(() => toast.dismiss());

  it('checks its expected texts against the locale files', () => {
    const common = localeResources[language]?.common as { errors: Record<string, { title: string; description: string }> };
    expect(common.errors.network).toEqual({ title: text.networkTitle, description: text.network });
    expect(common.errors.server).toEqual({ title: text.serverTitle, description: text.server });
    expect(common.errors.forbidden?.title).toBe(text.forbiddenTitle);
    expect(common.errors.other?.description).toBe(text.unknown);
  });

  it('no answer: the action’s error title with the network text', async () => {
    fakeApi({ 'POST /api/groups': () => 'network-error' });
    const err = await failureOf(api('/groups', { method: 'POST', notify: false }));
    expect(describeFailure(err, i18n.t, titles)).toEqual({ title: 'Save error', description: text.network });
    expect(describeFailure(err, i18n.t, { failed: 'Save failed' })).toEqual({ title: 'Save failed', description: text.network });
    expect(failureText(err, i18n.t)).toBe(text.network);
  });

  it('a timeout is told as no answer', async () => {
    const err = await timedOut();
    expect(describeFailure(err, i18n.t, titles)).toEqual({ title: 'Save error', description: text.network });
  });

  it('a 4xx: the action’s failed title with the server’s localised message, else the fallback', async () => {
    fakeApi({
      'POST /api/groups': (req) => fail(409, req.headers.get('accept-language') === 'zh-CN' ? texts['zh-CN'].refused : texts.en.refused),
      'POST /api/quiet': () => ({ status: 400, body: { success: false } }),
    });
    const refused = await failureOf(api('/groups', { method: 'POST', notify: false }));
    expect(describeFailure(refused, i18n.t, titles)).toEqual({ title: 'Save failed', description: text.refused });
    expect(failureText(refused, i18n.t)).toBe(text.refused);
    const silent = await failureOf(api('/quiet', { method: 'POST', notify: false }));
    expect(describeFailure(silent, i18n.t, titles)).toEqual({ title: 'Save failed', description: 'Nothing was saved' });
    expect(failureText(silent, i18n.t)).toBe(text.unknown);
  });

  it('a 5xx and a 403: the console’s own texts in a toast, whatever the action; a screen’s text keeps the server’s', async () => {
    fakeApi({ 'POST /api/groups': () => fail(500, 'db down'), 'POST /api/admin': () => fail(403, 'no'), 'GET /api/x': () => fail(502) });
    const broken = await failureOf(api('/groups', { method: 'POST', notify: false }));
    expect(describeFailure(broken, i18n.t, titles)).toEqual({ title: text.serverTitle, description: text.server });
    expect(failureText(broken, i18n.t)).toBe('db down');
    expect(failureText(await failureOf(api('/x', { notify: false })), i18n.t)).toBe(text.unknown);
    const denied = await failureOf(api('/admin', { method: 'POST', notify: false }));
    expect(describeFailure(denied, i18n.t, titles)?.title).toBe(text.forbiddenTitle);
  });

  it('says nothing for a 401 of a session (sign-in follows) or a cancelled call; a browser error gets the fallback', () => {
    expect(describeFailure(new ApiError(401, 'unauthorized', 'expired'), i18n.t, titles)).toBeNull();
    expect(describeFailure(new ApiError(0, 'aborted'), i18n.t, titles)).toBeNull();
    expect(failureText(new ApiError(401, 'unauthorized', 'wrong password'), i18n.t)).toBe('wrong password');
    expect(describeFailure(new TypeError('x is undefined'), i18n.t, titles)).toEqual({
      title: 'Save error',
      description: 'Nothing was saved',
    });
    expect(describeFailure(new TypeError('x'), i18n.t, { failed: 'Save failed' })?.description).toBe(text.unknown);
  });

  it('a check in the browser: the failed title with its message, in the screen’s namespace', () => {
    const t = i18n.getFixedT(language, 'services');
    const failure = describeFailure(new LocalCheckError('errors.invalidId'), t, titles);
    expect(failure?.title).toBe('Save failed');
    expect(failure?.description).toBe(t('errors.invalidId'));
    expect(failure?.description).not.toBe('errors.invalidId');
  });

  it('shows one toast, or none', async () => {
    const error = vi.spyOn(toast, 'error');
    showFailure(new ApiError(0, 'network'), i18n.t, titles);
    showFailure(new ApiError(0, 'aborted'), i18n.t, titles);
    expect(error).toHaveBeenCalledExactlyOnceWith('Save error', { description: text.network });
  });
});
