import { describe, expect, it } from 'vitest';
import { ToolOverrides } from './tool-policy.js';

const tools = [
  { name: 'echo', description: 'Echoes', inputSchema: { type: 'object' } },
  { name: 'get-sum', description: 'Adds' },
  { name: 'say', description: 'A tool whose name another tool’s alias takes' },
];

describe('tool overrides where lists leave the gateway', () => {
  it('passes lists and calls untouched without overrides', () => {
    expect(ToolOverrides.NONE.applyToList(tools)).toEqual(tools);
    expect(ToolOverrides.NONE.resolveCall('anything')).toEqual({ name: 'anything' });
  });

  it('renames, re-describes and hides, keeping the other fields', () => {
    const o = new ToolOverrides([
      { originalName: 'echo', enabled: true, alias: 'say', description: 'Says it back' },
      { originalName: 'get-sum', enabled: false },
    ]);
    expect(o.applyToList(tools)).toEqual([{ name: 'say', description: 'Says it back', inputSchema: { type: 'object' } }]);
    expect(o.resolveCall('say')).toEqual({ name: 'echo' });
    expect(o.resolveCall('echo')).toEqual({ refused: 'Unknown tool: echo' });
    expect(o.resolveCall('get-sum')).toEqual({ refused: 'Tool get-sum is disabled on this gateway' });
    expect(o.resolveCall('other')).toEqual({ name: 'other' });
  });

  it('keeps the upstream description when only the name changes', () => {
    const o = new ToolOverrides([{ originalName: 'get-sum', enabled: true, alias: 'add' }]);
    expect(o.applyToList(tools).find((t) => t.name === 'add')).toEqual({ name: 'add', description: 'Adds' });
  });
});
