/** Reading the loosely typed people and link fields of package metadata. */

export interface GithubRepo {
  owner: string;
  repo: string;
}

const GITHUB_HOSTS = new Set(['github.com', 'www.github.com']);
const NAME_PART = /^[A-Za-z0-9_.-]+$/;

/**
 * The GitHub repository a URL points into, in any of the forms package metadata uses:
 * https URLs (with /tree/…, #readme or /issues after), git+https, git://, git@github.com:o/r.git,
 * and npm's `github:o/r` shorthand.
 */
export function githubRepoOf(url: string | undefined): GithubRepo | null {
  if (!url) return null;
  let text = url.trim();
  const shorthand = /^github:([^/\s]+)\/([^/\s#]+)/.exec(text);
  if (shorthand?.[1] && shorthand[2]) return clean(shorthand[1], shorthand[2]);
  text = text.replace(/^git\+/, '').replace(/^git@github\.com:/, 'https://github.com/');
  let parsed: URL;
  try {
    parsed = new URL(text);
  } catch {
    return null;
  }
  if (!GITHUB_HOSTS.has(parsed.hostname.toLowerCase())) return null;
  const [owner, repo] = parsed.pathname.split('/').filter(Boolean);
  return owner && repo ? clean(owner, repo) : null;
}

function clean(owner: string, repo: string): GithubRepo | null {
  const name = repo.replace(/\.git$/, '');
  return NAME_PART.test(owner) && NAME_PART.test(name) ? { owner, repo: name } : null;
}

/**
 * A browsable repository URL from npm's `repository` (a string, `{type, url}`, or the
 * `owner/repo` and `github:owner/repo` shorthands). GitHub URLs come back canonical.
 */
export function repositoryUrlOf(repository: unknown): string {
  const raw =
    typeof repository === 'string' ? repository : isRecord(repository) && typeof repository.url === 'string' ? repository.url : '';
  if (!raw) return '';
  const bare = /^([A-Za-z0-9_.-]+)\/([A-Za-z0-9_.-]+)$/.exec(raw.trim());
  const gh = bare?.[1] && bare[2] ? clean(bare[1], bare[2]) : githubRepoOf(raw);
  if (gh) return `https://github.com/${gh.owner}/${gh.repo}`;
  const url = raw
    .trim()
    .replace(/^git\+/, '')
    .replace(/^git:\/\//, 'https://')
    .replace(/\.git$/, '');
  return /^https?:\/\//.test(url) ? url : '';
}

/** The first GitHub repository among URLs, as a canonical URL, or ''. */
export function firstGithubUrl(urls: (string | undefined)[]): string {
  for (const url of urls) {
    const gh = githubRepoOf(url);
    if (gh) return `https://github.com/${gh.owner}/${gh.repo}`;
  }
  return '';
}

/** A person's display name from `"Name <email> (url)"`, `{name}` or `{username}`. */
export function personName(person: unknown): string {
  if (typeof person === 'string')
    return person
      .replace(/<[^>]*>/g, '')
      .replace(/\([^)]*\)/g, '')
      .trim();
  if (!isRecord(person)) return '';
  if (typeof person.name === 'string' && person.name.trim()) return person.name.trim();
  if (typeof person.username === 'string') return person.username.trim();
  return '';
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A string field, or '' when it is absent or not a string. */
export const str = (value: unknown): string => (typeof value === 'string' ? value : '');
