import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { alive, until } from '../../../test/fixtures/upstream-kit.js';
import { census } from './process-census.js';
import { type SpawnedGroup, spawnGroup, stopGroup } from './process-group.js';

/**
 * The process census with real processes (docs/decisions/0045): a shell that starts a same-group child, a
 * `setsid` child, a `setsid` child with an empty environment, and a double-forked daemon whose middle process
 * is gone at once. Each writes its pid to a file; /proc is the judge (a zombie counts as dead).
 */
const dir = mkdtempSync(path.join(tmpdir(), 'toolport-census-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const FAMILY = [
  'sleep 1000 & echo group $! >> "$1"',
  'setsid sleep 1000 & echo session $! >> "$1"',
  'env -i setsid sleep 1000 & echo scrubbed $! >> "$1"',
  `setsid sh -c 'sleep 1000 & echo daemon $! >> "$1"' sh "$1" &`,
  'exec sleep 1000',
].join('\n');

async function family(name: string): Promise<{ group: SpawnedGroup; pids: Record<string, number> }> {
  const file = path.join(dir, name);
  const group = await spawnGroup('/bin/sh', ['-c', FAMILY, 'sh', file], dir, { PATH: process.env.PATH ?? '' });
  const read = () =>
    Object.fromEntries(
      readFileSync(file, 'utf8')
        .trim()
        .split('\n')
        .map((line) => line.split(' '))
        .map(([role, pid]) => [role, Number(pid)]),
    ) as Record<string, number>;
  await until(() => {
    try {
      return Object.keys(read()).length === 4;
    } catch {
      return false;
    }
  }, 'the family to start');
  return { group, pids: { leader: group.pid, ...read() } };
}

describe('the process census', () => {
  it('counts every process a tool server starts, however it detaches, and a stop ends them all', async () => {
    const { group, pids } = await family('one');
    // The daemon's middle process is gone: it is known by its environment's marker, the rest by parent and session.
    await until(() => {
      census.scan();
      return Object.values(pids).every((pid) => census.pids(group.instance).includes(pid));
    }, 'every process to be counted');
    expect(Object.values(pids).every(alive)).toBe(true);
    expect(census.rssBytes(group.instance)).toBeGreaterThan(0);

    await stopGroup(group, 200);
    expect(Object.values(pids).filter(alive)).toEqual([]);
    expect(census.pids(group.instance)).toEqual([]);
  });

  it('keeps two instances apart and stops one without touching the other', async () => {
    const first = await family('two-a');
    const second = await family('two-b');
    census.scan();
    const a = census.pids(first.group.instance);
    const b = census.pids(second.group.instance);
    expect(a.filter((pid) => b.includes(pid))).toEqual([]);
    await stopGroup(first.group, 200);
    expect(Object.values(first.pids).filter(alive)).toEqual([]);
    expect(Object.values(second.pids).every(alive)).toBe(true);
    await stopGroup(second.group, 200);
    expect(Object.values(second.pids).filter(alive)).toEqual([]);
  });
});
