/**
 * Where the focus goes back when a dialog closes (docs/console.md §4, decision 0038).
 *
 * radix gives the focus back to a dialog's own Trigger. Most of the console's dialogs have none: they open from
 * state (a card's Configure button, a menu item, a table row), and radix then focuses nothing, so the focus
 * fell to `<body>`. The dialog primitives instead remember, when they open, the elements that had the focus
 * most recently, and on close give it to the newest of them that is still in the page and can take it. A menu
 * item that opened the dialog is gone by then; the menu's trigger, focused just before it, takes its place.
 */

const HISTORY = 8;
let recent: WeakRef<HTMLElement>[] = [];
let listening = false;

function remember(event: FocusEvent): void {
  const target = event.target;
  if (!(target instanceof HTMLElement)) return;
  recent = [...recent.filter((ref) => ref.deref() !== target), new WeakRef(target)].slice(-HISTORY);
}

/** Starts following the focus; called by the dialog primitives, once is enough. */
export function followFocus(): void {
  if (listening || typeof document === 'undefined') return;
  listening = true;
  document.addEventListener('focusin', remember, true);
}

/** An element the focus can go back to: still in the page, shown, not disabled, not inside an inert part. */
function canTakeFocus(el: HTMLElement): boolean {
  if (!el.isConnected || el === document.body) return false;
  if (el.matches(':disabled') || el.closest('[inert]')) return false;
  // Hidden ones (display: none, or inside a closed panel) cannot take it; jsdom has no checkVisibility.
  return typeof el.checkVisibility === 'function' ? el.checkVisibility() : true;
}

/**
 * The elements that had the focus up to now, newest first, and the element focused at this moment: called
 * when a dialog opens, before it moves the focus inside.
 */
export function focusOrigins(): HTMLElement[] {
  followFocus();
  const now = document.activeElement instanceof HTMLElement ? [document.activeElement] : [];
  const earlier = recent
    .map((ref) => ref.deref())
    .filter((el): el is HTMLElement => !!el)
    .reverse();
  return [...new Set([...now, ...earlier])];
}

/** How long a control that is busy (disabled) when its dialog closes is waited for. */
const BUSY_WAIT_MS = 30_000;

/** Focuses `el` once it is enabled again, unless the user has put the focus somewhere meanwhile. */
function focusWhenEnabled(el: HTMLElement): void {
  const observer = new MutationObserver(() => {
    if (el.matches(':disabled')) return;
    stop();
    if (document.activeElement === document.body || document.activeElement === null) el.focus({ preventScroll: true });
  });
  const timer = setTimeout(() => stop(), BUSY_WAIT_MS);
  const stop = () => {
    observer.disconnect();
    clearTimeout(timer);
  };
  observer.observe(el, { attributes: true, attributeFilter: ['disabled'] });
}

/**
 * Gives the focus to the newest of `origins` that can take it; false when none could (then radix decides).
 * The newest one still in the page may be busy (disabled while the action its dialog confirmed runs, like a
 * user's status switch): it gets the focus back as soon as it is enabled again.
 */
export function returnFocus(origins: readonly HTMLElement[]): boolean {
  const newest = origins.find((el) => el.isConnected && el !== document.body);
  if (newest?.matches(':disabled') && !newest.closest('[inert]')) {
    focusWhenEnabled(newest);
    return true;
  }
  const target = origins.find(canTakeFocus);
  if (!target) return false;
  target.focus({ preventScroll: true });
  return document.activeElement === target;
}

/**
 * The two handlers a radix dialog content takes to give the focus back on close. A handler of the dialog's
 * own that calls `preventDefault()` keeps the last word (it has put the focus somewhere itself).
 */
export function focusReturnHandlers(
  origins: { current: HTMLElement[] },
  own: { onOpenAutoFocus?: (event: Event) => void; onCloseAutoFocus?: (event: Event) => void },
): { onOpenAutoFocus(event: Event): void; onCloseAutoFocus(event: Event): void } {
  return {
    onOpenAutoFocus: (event) => {
      origins.current = focusOrigins();
      own.onOpenAutoFocus?.(event);
    },
    onCloseAutoFocus: (event) => {
      own.onCloseAutoFocus?.(event);
      if (event.defaultPrevented) return;
      if (returnFocus(origins.current)) event.preventDefault();
    },
  };
}
