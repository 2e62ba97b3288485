import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { node22 } from './suite-install.js';

/** What both conformance tests read of the official suite's runs (conformance.test.ts, conformance-2026.test.ts). */
export const run = promisify(execFile);

export interface Check {
  id: string;
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO' | 'SKIPPED';
  errorMessage?: string;
}

/**
 * Runs the suite's server scenarios that `selection` names (`--suite all --spec-version …` or `--requirements …`)
 * against `url` with the suite's CLI `cli`; returns each scenario's checks, by scenario name.
 */
export async function runServerSuite(cli: string, url: string, selection: string[]): Promise<Map<string, Check[]>> {
  const out = mkdtempSync(path.join(tmpdir(), 'toolport-conformance-'));
  try {
    // The suite exits 1 when a scenario fails; the checks it wrote are what the tests read.
    await run(node22, [cli, 'server', '--url', url, ...selection, '-o', out], { timeout: 240_000 }).catch((e) => {
      if (typeof e?.code !== 'number') throw e;
    });
    const results = new Map<string, Check[]>();
    for (const dir of readdirSync(out)) {
      const name = /^server-(.+)-\d{4}-\d{2}-\d{2}T/.exec(dir)?.[1];
      if (!name || !existsSync(path.join(out, dir, 'checks.json'))) continue;
      results.set(name, JSON.parse(readFileSync(path.join(out, dir, 'checks.json'), 'utf8')) as Check[]);
    }
    return results;
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

/** The failing checks with the suite's own words, one line each (an assertion's message). */
export const whyFailed = (results: Map<string, Check[]>): string =>
  [...results]
    .flatMap(([name, checks]) => checks.filter((c) => c.status === 'FAILURE').map((c) => `${name} ${c.id}: ${c.errorMessage ?? ''}`))
    .join('\n');
