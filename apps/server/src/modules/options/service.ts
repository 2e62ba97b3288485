import type { OptionEntry, OptionKey } from '@toolport/contract';
import { optionKeys } from '@toolport/contract';
import { badRequest } from '../../http/errors.js';
import type { ConfigEvents } from '../../infra/events.js';
import type { Secrets } from '../../infra/secrets.js';
import { definitions, isOptionKey, isSecretOption, maskSecret, SECRET_MASK } from './definitions.js';
import type { OptionsRepo } from './repo.js';
import { oidcProviderSecrets, type StructuredSecrets } from './structured-secrets.js';

/** Preferences that are documents with secrets inside. */
const structured: Partial<Record<OptionKey, StructuredSecrets>> = { OIDCProviders: oidcProviderSecrets };

/**
 * Server preferences: a whitelist of keys, each validated; secrets encrypted at rest and masked
 * when read. Values are held in memory and reloaded when another replica announces a change.
 */
export class OptionsService {
  private values = new Map<OptionKey, string>();

  constructor(
    private readonly repo: OptionsRepo,
    private readonly secrets: Secrets,
    private readonly events: ConfigEvents,
  ) {}

  async load(): Promise<void> {
    const next = new Map<OptionKey, string>();
    for (const row of await this.repo.all()) {
      if (!isOptionKey(row.key)) continue;
      const inside = structured[row.key];
      if (inside) next.set(row.key, inside.open(row.value, this.secrets));
      else next.set(row.key, isSecretOption(row.key) && row.value ? this.secrets.decrypt(row.value) : row.value);
    }
    this.values = next;
  }

  get(key: OptionKey): string {
    return this.values.get(key) ?? definitions[key].default;
  }

  bool(key: OptionKey): boolean {
    return this.get(key) === 'true';
  }

  int(key: OptionKey): number {
    return Number(this.get(key));
  }

  /** Every preference for the admin console, secrets masked. */
  list(): OptionEntry[] {
    return optionKeys.map((key) => {
      const value = this.get(key);
      return { key, value: isSecretOption(key) ? maskSecret(value) : (structured[key]?.mask(value) ?? value) };
    });
  }

  async set(rawKey: string, rawValue: string | number | boolean): Promise<void> {
    if (!isOptionKey(rawKey)) throw badRequest('option.unknown_key', { key: rawKey }, 'unknown_option');
    const key = rawKey;
    const submitted = String(rawValue);
    // The console sends the mask back when a secret was left untouched.
    if (isSecretOption(key) && submitted === SECRET_MASK) return;
    const result = definitions[key].normalise(submitted);
    if ('reason' in result) throw badRequest(result.reason, { ...result.params, key }, 'invalid_option');
    const inside = structured[key];
    const value = inside ? inside.keep(result.value, this.get(key)) : result.value;
    this.checkProviderSwitch(key, value);
    const stored = inside ? inside.seal(value, this.secrets) : isSecretOption(key) && value ? this.secrets.encrypt(value) : value;
    await this.repo.upsert(key, stored);
    this.values.set(key, value);
    this.events.emit({ type: 'option.changed', key });
  }

  private checkProviderSwitch(key: OptionKey, value: string): void {
    if (value !== 'true') return;
    if (key === 'GitHubOAuthEnabled' && !this.get('GitHubClientId')) {
      throw badRequest('option.client_id_required', { provider: 'GitHub' }, 'client_id_required');
    }
    if (key === 'GoogleOAuthEnabled' && !this.get('GoogleClientId')) {
      throw badRequest('option.client_id_required', { provider: 'Google' }, 'client_id_required');
    }
  }

  /** A provider is usable when switched on and given a client id and secret: the sign-in routes need all three. */
  providerUsable(provider: 'github' | 'google'): boolean {
    return provider === 'github'
      ? this.bool('GitHubOAuthEnabled') && this.get('GitHubClientId') !== '' && this.get('GitHubClientSecret') !== ''
      : this.bool('GoogleOAuthEnabled') && this.get('GoogleClientId') !== '' && this.get('GoogleClientSecret') !== '';
  }
}
