/** Shared by the global setup (main process) and the fixtures (workers); no Playwright imports here. */

export const ADMIN_USERNAME = 'root';
/** The ADMIN_PASSWORD the suite's server starts with, so `root` can sign in. */
export const ADMIN_PASSWORD = 'e2e-root-password';

/** Set by the global setup, read in the workers (they inherit its environment). */
export const SERVER_URL_ENV = 'TOOLPORT_E2E_URL';
