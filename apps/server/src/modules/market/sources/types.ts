import type { MarketSourceName as SourceName } from '@toolport/contract';

export type { SourceName };

/** A variable as a registry declares it (the MCP Registry's `environmentVariables` or remote `headers`). */
export interface DeclaredEnvVar {
  name: string;
  description: string;
  isRequired: boolean;
  isSecret: boolean;
  /** The registry's default or fixed value; '' when none. */
  defaultValue: string;
}

/**
 * How a package runs, as far as its source says: the input of `mcp_config` now, and of the
 * installer later. npm and PyPI packages are plain packages; MCP Registry entries may also be
 * container images or remote endpoints.
 */
export type LaunchPlan =
  | {
      kind: 'package';
      /** npm, pypi, oci, nuget, mcpb … as the MCP Registry names them. */
      registryType: string;
      identifier: string;
      version: string;
      /** npx, uvx, docker, dnx … when the registry gave one. */
      runtimeHint: string;
      runtimeArguments: string[];
      packageArguments: string[];
      env: DeclaredEnvVar[];
    }
  | {
      kind: 'remote';
      transport: 'streamableHttp' | 'sse';
      /** May hold `{name}` placeholders, filled from the variables of the same name (`variables`). */
      url: string;
      headers: DeclaredEnvVar[];
      /** The URL template's variables, asked for like environment variables. */
      variables: DeclaredEnvVar[];
    };

/** A package as one source describes it, before downloads, stars and installed state are added. */
export interface SourcePackage {
  source: SourceName;
  name: string;
  version: string;
  description: string;
  /** Empty when the source names nobody: the mapping then falls back to the GitHub owner. */
  author: string;
  homepage: string;
  repositoryUrl: string;
  /** Further URLs that may lead to the GitHub repository (npm's `bugs`). */
  linkHints: string[];
  /** ISO 8601, or '' when unknown. */
  lastPublish: string;
  /** Weekly downloads when the source reported them with the package; null means ask npm's downloads API. */
  weeklyDownloads: number | null;
  /** The npm package whose downloads count for this entry, when it is one. */
  npmPackage: string;
  /** Variables the registry declares, before any readme is read. */
  declaredEnv: DeclaredEnvVar[];
  launch: LaunchPlan | null;
  /** Markdown (or the registry's text); '' in search results. */
  readme: string;
  /** The MCP Registry entry an npm package names in its package.json (`mcpName`), or ''. */
  mcpName: string;
}

/** Part of a source's search that failed while the rest answered (PyPI's MCP Registry half): reported, not thrown. */
export interface PartialFailure {
  /** The registry that failed, as messages name it. */
  part: string;
  reason: string;
  /** The setting that points at that registry. */
  setting: string;
}

/** What the marketplace asks of every source. */
export interface MarketSource {
  readonly name: SourceName;
  /**
   * Up to `limit` packages for a non-empty query; throws SourceError (after a log line) when the registry
   * fails, so that a failed search is never shown as "nothing found" (issue 15, item 3).
   */
  search(query: string, limit: number, partial?: (failure: PartialFailure) => void): Promise<SourcePackage[]>;
  /** The package with its readme; null when the registry says it does not exist; throws SourceError when the registry fails. */
  details(name: string): Promise<SourcePackage | null>;
}

export const emptyPackage = (source: SourceName, name: string): SourcePackage => ({
  source,
  name,
  version: '',
  description: '',
  author: '',
  homepage: '',
  repositoryUrl: '',
  linkHints: [],
  lastPublish: '',
  weeklyDownloads: null,
  npmPackage: '',
  declaredEnv: [],
  launch: null,
  readme: '',
  mcpName: '',
});

/** Shared knobs of every source: base URLs come from configuration, these from the service. */
export interface SourceOptions {
  timeoutMs: number;
  logger: { warn(obj: object, msg: string): void };
  /** How long answers are kept; defaults per source. */
  ttlMs?: number;
}
