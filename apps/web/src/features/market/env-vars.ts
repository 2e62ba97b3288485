import { PLACEHOLDER_MARKERS } from '@toolport/contract';
import type { MarketEnvVar } from './market-item';

/** A value counts as missing when it is empty or still a placeholder (docs/console.md §5, detail view install). */
export function isMissingEnvValue(value: string | undefined): boolean {
  if (!value) return true;
  const lower = value.toLowerCase();
  return PLACEHOLDER_MARKERS.some((marker) => lower.includes(marker));
}

/**
 * The required variables with neither an entered value nor a usable default: they block the install
 * until given (docs/console.md §5), as the server would refuse it for them.
 */
export function missingRequiredVars(vars: readonly MarketEnvVar[], values: Record<string, string> = {}): MarketEnvVar[] {
  return vars.filter((v) => v.isRequired && isMissingEnvValue(values[v.name] ?? v.value) && isMissingEnvValue(v.defaultValue));
}

/**
 * The missing-variable modal's rule (docs/console.md §5): every listed variable must be non-blank after
 * trimming. Returns the name of the first blank one, or null when all are filled.
 */
export function firstBlankVar(names: readonly string[], values: Record<string, string>): string | null {
  return names.find((name) => !values[name]?.trim()) ?? null;
}

/** The variables the modal asks for: the server's names, described by what the package declares when known. */
export function varsNamed(names: readonly string[], known: readonly MarketEnvVar[]): MarketEnvVar[] {
  return names.map(
    (name) =>
      known.find((v) => v.name === name) ?? { name, description: '', isSecret: false, isRequired: true, defaultValue: '', value: '' },
  );
}
