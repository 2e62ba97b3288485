/** Full-page navigation away from the console (an OAuth provider's sign-in page); a seam for tests. */
export function leaveTo(url: string): void {
  window.location.assign(url);
}
