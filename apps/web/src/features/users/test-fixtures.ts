import type { PublicUser } from '@toolport/contract';

/** A user as GET /api/user/?p= returns it; tests override what they look at. */
export function publicUser(overrides: Partial<PublicUser> = {}): PublicUser {
  const id = overrides.id ?? 10;
  return {
    id,
    username: `user${id}`,
    display_name: `User ${id}`,
    email: `user${id}@example.com`,
    role: 1,
    status: 1,
    github_id: '',
    google_id: '',
    wechat_id: '',
    login_method: 'password',
    created_at: 1_700_000_000_000 - id,
    ...overrides,
  };
}

/** `count` ordinary users with ids from `first` down, as one page of the list. */
export const usersPage = (count: number, first = 100): PublicUser[] =>
  Array.from({ length: count }, (_, i) => publicUser({ id: first - i }));
