import type { ServiceTool } from '@toolport/contract';
import { describe, expect, it } from 'vitest';
import { installedService } from '../../test/installed-service';
import { serviceCountsOf, toolCountsOfListing, toolCountsOfService } from './tool-counts';

const tool = (name: string, enabled = true): ServiceTool => ({
  name,
  original_name: name,
  enabled,
  description: '',
  original_description: '',
  alias: null,
  input_schema: { type: 'object' },
});

describe('"N of M tools enabled", one count for the card and the Tools dialog (issue 29)', () => {
  it('counts a user’s listing, which leaves out the tools switched off, against the total the server gives', () => {
    const forUser = { tools: [tool('a'), tool('b')], total: 3, dormant: [] };
    expect(toolCountsOfListing(forUser)).toEqual({ enabled: 2, total: 3 });
    const forAdmin = { tools: [tool('a'), tool('b'), tool('c', false)], total: 3, dormant: [] };
    expect(toolCountsOfListing(forAdmin)).toEqual(toolCountsOfListing(forUser));
  });

  it('gives the card the listing’s numbers, so both say the same', () => {
    const counts = toolCountsOfListing({ tools: [tool('a'), tool('b')], total: 3, dormant: [] });
    const card = installedService({ tool_count: 5, tools_disabled: 2 });
    expect(toolCountsOfService({ ...card, ...serviceCountsOf(counts) })).toEqual(counts);
  });

  it('falls back to the listing when a server gives no total', () => {
    expect(toolCountsOfListing({ tools: [tool('a'), tool('b', false)], dormant: [] })).toEqual({ enabled: 1, total: 2 });
  });
});
