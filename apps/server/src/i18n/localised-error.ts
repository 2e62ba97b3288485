import { type Locale, type MessageKey, type MessageParams, translate } from './index.js';

/**
 * An error a client may see, raised where no request (and so no language) is at hand — deep in the
 * upstream pool or an outbound fetch. It carries its message key; whoever answers the client renders
 * it in the client's language with `localised`, and logs read the English `message`.
 */
export class LocalisedError extends Error {
  constructor(
    readonly key: MessageKey,
    readonly params: MessageParams = {},
    /** Untranslated detail (a command's own output, an address), appended after a colon. */
    readonly detail = '',
  ) {
    super(`${translate('en', key, params)}${detail ? `: ${detail}` : ''}`);
    this.name = new.target.name;
  }

  localised(locale: Locale): string {
    return `${translate(locale, this.key, this.params)}${this.detail ? `: ${this.detail}` : ''}`;
  }
}
