// The installs room (decision 0047): following an install task to its end and reading a refused install,
// for the Services page (custom install, Update) and the Market; the server's is modules/market/install.
export { INSTALL_POLL_INTERVAL_MS, INSTALL_POLL_MAX_ATTEMPTS, type InstallOutcome, pollInstallStatus } from './install-polling';
export { requiredEnvVarsOf, withEnvPrefill } from './required-env';
export { fetchInstallStatus, useInstallPolling } from './use-install-polling';
