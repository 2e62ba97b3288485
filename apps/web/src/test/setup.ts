import '@testing-library/jest-dom/vitest';
import { cleanup, configure } from '@testing-library/react';
import { toast } from 'sonner';
import { afterAll, afterEach, beforeEach, vi } from 'vitest';
import { installMatchMedia } from './media';

// Pages and dialogs load their code lazily; on a busy machine that can take longer than the default second.
configure({ asyncUtilTimeout: 5_000 });

// jsdom lacks ResizeObserver; radix's positioned popups (tooltips) measure their trigger with it.
globalThis.ResizeObserver ??= class {
  observe() {}
  unobserve() {}
  disconnect() {}
};

beforeEach(() => {
  localStorage.clear();
  sessionStorage.clear();
  document.documentElement.className = '';
  document.documentElement.removeAttribute('style');
  installMatchMedia();
});

afterEach(() => {
  cleanup();
  toast.dismiss();
  vi.unstubAllGlobals();
  vi.restoreAllMocks();
  vi.useRealTimers();
});

// Sonner removes a dismissed toast 200 ms later, on a timer it does not clear when it unmounts. That timer must
// fire while the file's DOM still exists: after teardown, React's state update reaches for `window` and the
// whole run fails on an uncaught ReferenceError.
afterAll(() => new Promise((resolve) => setTimeout(resolve, 300)));
