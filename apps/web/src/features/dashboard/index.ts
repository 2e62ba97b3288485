// The dashboard room's door (decision 0047): what the rest of the console uses of it.
export { dashboardRoutes } from './routes';
