// The logs room's door (decision 0047): its routes. The pager, page arithmetic and time format it shares with the
// audit screen live in components/pager.tsx, lib/pagination.ts and lib/log-time.ts.
export { logsRoutes } from './routes';
