import { TtlCache } from './cache.js';
import { getJson, joinUrl, SourceError } from './http.js';
import { type GithubRepo, isRecord } from './links.js';
import type { SourceOptions } from './types.js';

const HOUR = 3_600_000;

export interface GithubStarsOptions extends SourceOptions {
  apiUrl: string;
  token: string | undefined;
}

/**
 * Star counts from GitHub's repos API. Without a token GitHub allows 60 calls an hour, so counts
 * are kept an hour, many packages of one repository share one call, and once GitHub says the
 * limit is reached no call is made until its reset time. Every failure counts as unknown (null), never as 0 stars.
 */
export class GithubStars {
  private readonly counts: TtlCache<number | null>;
  private pausedUntil = 0;

  constructor(
    private readonly opts: GithubStarsOptions,
    private readonly now: () => number = Date.now,
  ) {
    this.counts = new TtlCache(opts.ttlMs ?? HOUR, 2000, now);
  }

  /** The repository's stars; null when unknown (no repository, not found, lookup failed or paused). */
  async stars(repo: GithubRepo | null): Promise<number | null> {
    if (!repo || this.now() < this.pausedUntil) return null;
    const key = `${repo.owner}/${repo.repo}`.toLowerCase();
    try {
      return await this.counts.getOrLoad(key, () => this.fetchStars(repo));
    } catch (err) {
      this.noteRateLimit(err);
      this.opts.logger.warn({ source: 'github', repo: key, err: String(err) }, 'marketplace star count failed');
      return null;
    }
  }

  private async fetchStars(repo: GithubRepo): Promise<number | null> {
    const headers: Record<string, string> = { accept: 'application/vnd.github+json', 'x-github-api-version': '2022-11-28' };
    if (this.opts.token) headers.authorization = `Bearer ${this.opts.token}`;
    const path = `repos/${encodeURIComponent(repo.owner)}/${encodeURIComponent(repo.repo)}`;
    const answer = await getJson(joinUrl(this.opts.apiUrl, path), { timeoutMs: this.opts.timeoutMs, headers });
    // A repository that does not exist (or is private) has no stars to show: remembered, as unknown.
    if (answer === null) return null;
    if (!isRecord(answer) || typeof answer.stargazers_count !== 'number') throw new SourceError('the repository has no stargazers_count');
    return answer.stargazers_count;
  }

  private noteRateLimit(err: unknown): void {
    if (!(err instanceof SourceError) || (err.status !== 403 && err.status !== 429)) return;
    if (err.headers?.get('x-ratelimit-remaining') !== '0' && err.status !== 429) return;
    const reset = Number(err.headers?.get('x-ratelimit-reset'));
    this.pausedUntil = Number.isFinite(reset) && reset > 0 ? reset * 1000 : this.now() + HOUR / 4;
  }
}
