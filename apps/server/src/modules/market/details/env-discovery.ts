import type { EnvVarDeclaration } from '@toolport/contract';
import type { DeclaredEnvVar } from '../sources/types.js';
import { configBlockVars, type EnvCandidate, looksSecret, splitMarkdown } from './readme-env.js';
import { mentionedVars } from './readme-mentions.js';

/** A readme listing more than this is documenting something else than its own configuration. */
const MAX_VARS = 50;

/**
 * The variables a package reads, in order of trust: what its registry entry declares, then the
 * `env` of the `mcpServers` blocks in its readme, then variables the readme mentions. A later
 * source only fills in what an earlier one left unsaid (a description, a default, whether it is
 * optional). A secret-looking name is always treated as secret, whatever the evidence says.
 */
export function discoverEnvVars(declared: DeclaredEnvVar[], readme: string): EnvVarDeclaration[] {
  const { blocks, prose } = splitMarkdown(readme);
  const candidates: EnvCandidate[] = [
    ...declared.map(
      (d): EnvCandidate => ({
        name: d.name,
        origin: 'registry',
        description: d.description || undefined,
        isSecret: d.isSecret,
        optional: !d.isRequired,
        defaultValue: d.defaultValue || undefined,
      }),
    ),
    ...configBlockVars(blocks),
    ...mentionedVars(blocks, prose),
  ];

  const merged = new Map<string, EnvCandidate>();
  for (const c of candidates) {
    const known = merged.get(c.name);
    if (!known) {
      if (merged.size < MAX_VARS) merged.set(c.name, { ...c });
      continue;
    }
    known.description ||= c.description;
    known.optional ??= c.optional;
    known.defaultValue ??= c.defaultValue;
    known.isSecret = known.isSecret || c.isSecret;
  }
  return [...merged.values()].map(finish);
}

/**
 * When no evidence says whether a variable is optional: one written into the author's own config
 * is required; a mere mention is required only when it looks like a credential, since a server
 * needing a key cannot work without it while other mentions are usually tuning knobs.
 */
function finish(c: EnvCandidate): EnvVarDeclaration {
  const secret = c.isSecret === true || looksSecret(c.name);
  const optional = c.optional ?? (c.origin === 'mention' ? !secret : false);
  return {
    name: c.name,
    description: c.description ?? '',
    is_secret: secret,
    optional,
    default_value: c.defaultValue ?? '',
  };
}
