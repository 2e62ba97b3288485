// The preferences room's door (decision 0047): what the rest of the console uses of it.
export { preferencesRoutes } from './routes';
