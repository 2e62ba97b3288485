import { afterEach, describe, expect, it, vi } from 'vitest';
import { clipboardApiAvailable, copyText } from './clipboard';

function clipboardApi(writeText: ((text: string) => Promise<void>) | undefined) {
  Object.defineProperty(navigator, 'clipboard', { configurable: true, value: writeText ? { writeText } : undefined });
}

function execCommand(result: boolean | 'throws' | undefined) {
  const fn =
    result === undefined
      ? undefined
      : vi.fn(() => {
          if (result === 'throws') throw new Error('nope');
          return result;
        });
  Object.defineProperty(document, 'execCommand', { configurable: true, value: fn });
  return fn;
}

describe('copyText (docs/console.md §8 "Copy")', () => {
  afterEach(() => {
    clipboardApi(undefined);
    execCommand(undefined);
  });

  it('uses the clipboard API first', async () => {
    const writeText = vi.fn(async () => {});
    clipboardApi(writeText);
    const exec = execCommand(true);
    expect(await copyText('hello')).toEqual({ ok: true });
    expect(writeText).toHaveBeenCalledWith('hello');
    expect(exec).not.toHaveBeenCalled();
  });

  it("falls back to execCommand('copy') on a hidden textarea holding the text", async () => {
    clipboardApi(undefined);
    let selected = '';
    const exec = execCommand(true);
    exec?.mockImplementation(() => {
      selected = (document.activeElement as HTMLTextAreaElement).value;
      return true;
    });
    expect(clipboardApiAvailable()).toBe(false);
    expect(await copyText('fallback text')).toEqual({ ok: true });
    expect(exec).toHaveBeenCalledWith('copy');
    expect(selected).toBe('fallback text');
    expect(document.querySelector('textarea')).toBeNull();
  });

  it('falls back when the clipboard API refuses, and says access was denied if that fails too', async () => {
    clipboardApi(() => Promise.reject(Object.assign(new Error('denied'), { name: 'NotAllowedError' })));
    execCommand(true);
    expect(await copyText('x')).toEqual({ ok: true });
    execCommand(false);
    expect(await copyText('x')).toEqual({ ok: false, reason: 'denied' });
  });

  it('says execCommand failed when it returns false or throws', async () => {
    clipboardApi(undefined);
    execCommand(false);
    expect(await copyText('x')).toEqual({ ok: false, reason: 'execFailed' });
    execCommand('throws');
    expect(await copyText('x')).toEqual({ ok: false, reason: 'execFailed' });
  });

  it('says copying is not supported when neither way exists', async () => {
    clipboardApi(undefined);
    execCommand(undefined);
    expect(await copyText('x')).toEqual({ ok: false, reason: 'unsupported' });
  });
});
