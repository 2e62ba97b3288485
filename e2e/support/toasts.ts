import type { Locator, Page } from '@playwright/test';

/**
 * The toast showing `text`. The newest one: a toast being replaced stays in the page while it fades out,
 * so the same text can be there twice for a moment.
 */
export const toast = (page: Page, text: string): Locator => page.locator('[data-sonner-toast]').filter({ hasText: text }).last();
