// The oauth-consent room's door (decision 0047): what the rest of the console uses of it.
export { oauthConsentRoutes, oauthErrorRoutes } from './routes';
