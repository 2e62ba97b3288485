// The profile room's door (decision 0047): what the rest of the console uses of it.
export { ConnectedAppsList } from './connected-apps';
export { profileRoutes } from './routes';
