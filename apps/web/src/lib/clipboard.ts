/** Why a copy failed; each has its own message in the failure toast (docs/console.md §8 "Copy"). */
export type CopyFailure = 'denied' | 'execFailed' | 'unsupported';

export type CopyResult = { ok: true } | { ok: false; reason: CopyFailure };

/** Over plain http (not localhost) browsers hide the asynchronous clipboard; the dialog says so. */
export const clipboardApiAvailable = (): boolean => typeof navigator !== 'undefined' && !!navigator.clipboard?.writeText;

const execCommandAvailable = (): boolean => typeof document.execCommand === 'function';

/** The old way: select the text in a hidden textarea and ask the browser to copy the selection. */
function copyWithExecCommand(text: string): boolean {
  const area = document.createElement('textarea');
  area.value = text;
  area.setAttribute('readonly', '');
  area.setAttribute('aria-hidden', 'true');
  area.style.position = 'fixed';
  area.style.top = '-1000px';
  area.style.opacity = '0';
  const focused = document.activeElement as HTMLElement | null;
  document.body.appendChild(area);
  area.focus();
  area.select();
  try {
    return document.execCommand('copy');
  } catch {
    return false;
  } finally {
    area.remove();
    // Keep keyboard users where they were (the copy button), not on the removed textarea.
    focused?.focus?.();
  }
}

/**
 * Copies `text`: the clipboard API first, then `execCommand('copy')` on a hidden textarea, else a failure
 * with its reason. A refused clipboard permission counts as 'denied' only when the fallback fails too.
 */
export async function copyText(text: string): Promise<CopyResult> {
  let denied = false;
  if (clipboardApiAvailable()) {
    try {
      await navigator.clipboard.writeText(text);
      return { ok: true };
    } catch (err) {
      denied = (err as { name?: string })?.name === 'NotAllowedError';
    }
  }
  if (!execCommandAvailable()) return { ok: false, reason: denied ? 'denied' : 'unsupported' };
  if (copyWithExecCommand(text)) return { ok: true };
  return { ok: false, reason: denied ? 'denied' : 'execFailed' };
}
