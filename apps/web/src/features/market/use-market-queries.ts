import { type QueryClient, useQuery } from '@tanstack/react-query';
import { type MarketSourceName, routes } from '@toolport/contract';
import { type ApiWarning, call, callWithWarnings } from '../../lib/api';
import { fromMarketPackage, fromPackageDetails, type MarketItem } from './market-item';

/** The server keeps registry answers this long too; coming back from a package's details shows the results at once. */
const SEARCH_STALE_MS = 5 * 60_000;

export const marketKeys = {
  all: ['market'] as const,
  searches: ['market', 'search'] as const,
  search: (source: MarketSourceName, query: string) => ['market', 'search', source, query] as const,
  details: (source: string, name: string) => ['market', 'details', source, name] as const,
};

/**
 * Search and list failures are only logged (docs/console.md §8): the screen shows its empty state, and a
 * 401 still ends the session through the API client.
 */
async function logged<T>(what: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (err) {
    console.warn(`marketplace ${what} failed`, err);
    throw err;
  }
}

/** Search results, with what went partly wrong (a registry behind the source that did not answer). */
export type SearchResults = MarketItem[] & { warnings?: ApiWarning[] };

/** GET /api/mcp_market/search for one source; an empty term yields empty results without a request (docs/console.md §5). */
export function useMarketSearch(source: MarketSourceName | null, query: string) {
  const term = query.trim();
  return useQuery<SearchResults>({
    queryKey: marketKeys.search(source ?? 'npm', term),
    enabled: source !== null && term !== '',
    staleTime: SEARCH_STALE_MS,
    // Structural sharing copies arrays item by item: the list's `warnings` would be lost on a refetch.
    structuralSharing: false,
    queryFn: ({ signal }) =>
      logged('search', async () => {
        const { data, warnings } = await callWithWarnings(routes.market.search, {
          query: { query: term, sources: source ?? 'npm' },
          signal,
          notify: false,
        });
        return Object.assign(data.map(fromMarketPackage), { warnings });
      }),
  });
}

/** GET /api/mcp_market/package_details: the detail view's package; its own screen shows a failure. */
export function usePackageDetails(source: MarketSourceName, name: string) {
  return useQuery({
    queryKey: marketKeys.details(source, name),
    enabled: name !== '',
    queryFn: ({ signal }) =>
      call(routes.market.packageDetails, {
        query: { package_name: name, package_manager: source },
        signal,
        notify: false,
      }).then(fromPackageDetails),
  });
}

/** After an uninstall the service's results read "not installed" at once, without a new search. */
export function markUninstalled(queryClient: QueryClient, serviceId: number): void {
  queryClient.setQueriesData<MarketItem[]>({ queryKey: marketKeys.searches }, (items) =>
    items?.map((item) => (item.installed_service_id === serviceId ? { ...item, isInstalled: false, installed_service_id: null } : item)),
  );
}

/** Results and details say again whether each package is installed (after an install or uninstall). */
export const refreshMarket = (queryClient: QueryClient): Promise<void> => queryClient.invalidateQueries({ queryKey: marketKeys.all });
