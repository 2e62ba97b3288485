import { expect, type Locator, type Page } from '@playwright/test';

let sequence = 0;

/**
 * A username no other spec uses (process, time and a counter), within the server's 32 characters. Its parts
 * are never three runs of letters in a row, which the Chinese-text check would take for an English sentence.
 */
export function uniqueUsername(prefix: string): string {
  sequence += 1;
  return `${prefix}-${process.pid}-${Date.now().toString(36)}-${sequence}`.slice(0, 32);
}

/** The Users table row of `username`. */
export const findUserRow = (page: Page, username: string): Locator => page.locator(`[data-testid="user-row"][data-username="${username}"]`);

/** Searches the Users screen for `keyword` (Enter in the search box) and waits for the results. */
export async function searchUsers(page: Page, keyword: string, label = 'Search users'): Promise<void> {
  const answer = page.waitForResponse((res) => new URL(res.url()).pathname === '/api/user/search');
  const box = page.getByRole('searchbox', { name: label });
  await box.fill(keyword);
  await box.press('Enter');
  expect((await answer).status()).toBe(200);
}
