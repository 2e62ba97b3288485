// The logs room's door (decision 0047): its routes, and the pager, paging arithmetic and time format the audit
// log's screen shares.
export { LogPager } from './log-pager';
export { formatLogTime } from './log-time';
export { pageCount, shownRange } from './pagination';
export { logsRoutes } from './routes';
