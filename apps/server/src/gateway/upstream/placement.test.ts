import { describe, expect, it } from 'vitest';
import type { ServiceSpec } from '../catalog.js';
import type { UpstreamOAuthMode } from '../upstream-auth.js';
import { type Era, type PlacementFacts, place } from './placement.js';

const service = (isolation: 'shared' | 'session', type: ServiceSpec['type'] = 'stdio') => ({ id: 4, type, isolation }) as ServiceSpec;
const session = { id: 'sess-1', userId: 9 };
const request = { id: 'req-1', userId: 9, era: 'modern' as const };
const facts = (mode?: UpstreamOAuthMode, variables?: Record<string, string>): PlacementFacts => ({
  mode,
  variables,
  // As the one question of an acquisition answers it (credentials.ts): the shared connection, or the user's own.
  owner: mode === 'shared' ? 0 : mode === 'per_user' ? 9 : undefined,
});

/** Where a session's requests go (placement.ts): one rule for both eras, computed in one place. */
describe('placement', () => {
  const cases: [string, Era, ServiceSpec, typeof session | typeof request, PlacementFacts, object][] = [
    [
      'a shared service',
      '2025-11-25',
      service('shared'),
      session,
      facts(),
      { key: '2025-11-25|4|shared|', scope: 'shared', owner: undefined },
    ],
    [
      'personal values',
      '2025-11-25',
      service('shared'),
      session,
      facts(undefined, { TOKEN: 't' }),
      { key: '2025-11-25|4|user|u9', scope: 'user', userId: 9, userEnv: { TOKEN: 't' } },
    ],
    ['empty personal values', '2025-11-25', service('shared'), session, facts(undefined, {}), { scope: 'shared', userEnv: undefined }],
    [
      'a shared OAuth connection',
      '2025-11-25',
      service('shared', 'streamableHttp'),
      session,
      facts('shared'),
      { scope: 'shared', owner: 0 },
    ],
    [
      'per-user OAuth connections',
      '2025-11-25',
      service('shared', 'streamableHttp'),
      session,
      facts('per_user'),
      { key: '2025-11-25|4|user|u9', scope: 'user', owner: 9 },
    ],
    [
      'an isolated service',
      '2025-11-25',
      service('session'),
      session,
      facts(),
      { key: '2025-11-25|4|session|ssess-1', scope: 'session', outlivesSessions: false },
    ],
    [
      "an isolated service's request of 2026-07-28 through the 2025-11-25 link",
      '2025-11-25',
      service('session'),
      request,
      facts(),
      { key: '2025-11-25|4|session|u9', outlivesSessions: true },
    ],
    ['a shared service in 2026-07-28', '2026-07-28', service('shared'), request, facts(), { key: '2026-07-28|4|shared|', scope: 'shared' }],
    [
      'an isolated service in 2026-07-28, with personal values',
      '2026-07-28',
      service('session'),
      request,
      facts(undefined, { A: '1' }),
      { key: '2026-07-28|4|session|u9', userId: 9, userEnv: { A: '1' }, outlivesSessions: true },
    ],
    [
      'per-user OAuth in 2026-07-28',
      '2026-07-28',
      service('shared', 'streamableHttp'),
      request,
      facts('per_user'),
      { key: '2026-07-28|4|user|u9', owner: 9 },
    ],
  ];

  it.each(cases)('places %s', (_name, era, spec, who, known, expected) => {
    expect(place(era, spec, who, known)).toMatchObject({ era, serviceId: 4, ...expected });
  });

  it('gives two sessions of one user on an isolated service two links, and shares the rest', () => {
    const other = { id: 'sess-2', userId: 9 };
    expect(place('2025-11-25', service('session'), session, facts()).key).not.toBe(
      place('2025-11-25', service('session'), other, facts()).key,
    );
    expect(place('2025-11-25', service('shared'), session, facts()).key).toBe(place('2025-11-25', service('shared'), other, facts()).key);
    expect(place('2026-07-28', service('session'), request, facts()).key).toBe(
      place('2026-07-28', service('session'), { ...request, id: 'req-2' }, facts()).key,
    );
  });

  it("puts a user's listen stream on an isolated service where that user's modern requests run", () => {
    const listen = { id: 'listen-1', userId: session.userId, modernListen: true };
    const modern = { id: 'req-9', userId: session.userId, era: 'modern' as const };
    expect(place('2025-11-25', service('session'), listen, facts()).key).toBe(place('2025-11-25', service('session'), modern, facts()).key);
    expect(place('2025-11-25', service('session'), listen, facts()).key).not.toBe(
      place('2025-11-25', service('session'), { ...listen, userId: session.userId + 1 }, facts()).key,
    );
  });
});
