import { ApiError } from '../../lib/api';

/** Names the server said are missing (`data.required_env_vars` of a refused create, docs/console.md §8). */
export function requiredEnvVarsOf(err: unknown): string[] {
  if (!(err instanceof ApiError)) return [];
  const names = (err.data as { required_env_vars?: unknown } | undefined)?.required_env_vars;
  return Array.isArray(names) ? names.filter((n): n is string => typeof n === 'string' && n !== '') : [];
}

/** The environments text with a `NAME=` line for the first missing variable, unless it is there already. */
export function withEnvPrefill(environments: string, name: string): string {
  const present = environments.split(/\r?\n/).some((line) => line.split('=')[0]?.trim() === name);
  if (present) return environments;
  const text = environments.replace(/\s+$/, '');
  return text ? `${text}\n${name}=` : `${name}=`;
}
