// The audit room's door (decision 0047): what the rest of the console uses of it.
export { auditRoutes } from './routes';
