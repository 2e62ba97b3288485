import { describe, expect, it } from 'vitest';
import { installedService } from '../../test/installed-service';
import { healthLineOf, latencyOf, missingConnectionOf, shownStateOf } from './health';

describe('a service that needs authorization (issue 29)', () => {
  const shared = installedService({ health_status: 'needs_authorization', oauth_mode: 'shared', oauth_status: 'needs_authorization' });
  const discovered = installedService({ health_status: 'needs_authorization', oauth_mode: null, oauth_status: 'none' });
  const perUser = installedService({ health_status: 'healthy', oauth_mode: 'per_user', oauth_status: 'needs_authorization' });
  const mine = installedService({ health_status: 'healthy', oauth_mode: 'per_user', oauth_status: 'connected', tool_count: 7 });

  it('is a shared connection to make when its health says so, and the caller’s own in per-user mode', () => {
    expect(missingConnectionOf(shared)).toBe('shared');
    expect(missingConnectionOf(discovered)).toBe('shared');
    expect(missingConnectionOf(perUser)).toBe('mine');
    expect(missingConnectionOf(mine)).toBeUndefined();
    expect(missingConnectionOf(installedService({ health_status: 'unhealthy' }))).toBeUndefined();
  });

  it('shows the needs-authorization state, not healthy or unknown', () => {
    expect(shownStateOf(shared)).toBe('needs_authorization');
    expect(shownStateOf(perUser)).toBe('needs_authorization');
    expect(shownStateOf(mine)).toBe('healthy');
  });

  it('says who must connect it: the admin reading it, an administrator, or the user themselves', () => {
    expect(healthLineOf(shared, true).key).toBe('health.line.needsAuthorization');
    expect(healthLineOf(shared, false).key).toBe('health.line.needsAdminAuthorization');
    expect(healthLineOf(perUser, true).key).toBe('health.line.needsMyAuthorization');
    expect(healthLineOf(perUser, false).key).toBe('health.line.needsMyAuthorization');
    expect(healthLineOf(mine)).toEqual({ key: 'health.line.healthy', values: { count: 7 } });
  });
});

describe('the latency of a healthy check', () => {
  it('is read from the details in either language the server words them in', () => {
    expect(latencyOf('13 tools, 792 ms')).toBe(792);
    expect(latencyOf('13 个工具，792 毫秒')).toBe(792);
    expect(latencyOf('reachable; it answers 401 until each user connects their own account')).toBeUndefined();
  });
});
