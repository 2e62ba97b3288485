import type { InstalledService, ServiceTools } from '@toolport/contract';

export type ToolCounts = {
  enabled: number;
  total: number;
};

/**
 * "N of M tools enabled" (docs/console.md §2.9a), one source for the card and the Tools dialog (issue 29): the
 * card counts from the service row (the last check's tool count, less the tools switched off), the dialog from the
 * live listing, whose `total` counts the switched-off tools a non-admin is not given.
 */
export const toolCountsOfService = (service: Pick<InstalledService, 'tool_count' | 'tools_disabled'>): ToolCounts => ({
  enabled: Math.max(0, service.tool_count - service.tools_disabled),
  total: service.tool_count,
});

export function toolCountsOfListing(listing: ServiceTools): ToolCounts {
  const enabled = listing.tools.filter((tool) => tool.enabled).length;
  return { enabled, total: Math.max(listing.total ?? listing.tools.length, enabled) };
}

/** The row's fields the live listing corrects, so the card says what the dialog says once it has been opened. */
export const serviceCountsOf = ({ enabled, total }: ToolCounts): Pick<InstalledService, 'tool_count' | 'tools_disabled'> => ({
  tool_count: total,
  tools_disabled: total - enabled,
});
