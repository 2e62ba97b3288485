import type { FlatNamespace, ParseKeys, TFunction } from 'i18next';
import { ApiError } from './api';
import { notify } from './notify';

/**
 * A check in the browser failed before any request was sent. `messageKey` is a key of the namespace of the
 * screen that checks (the services and market namespaces both have the ones the checks use).
 */
export class LocalCheckError extends Error {
  constructor(readonly messageKey: ParseKeys<'services'>) {
    super(messageKey);
    this.name = 'LocalCheckError';
  }
}

/** What the user is told of a failed action. */
export interface Failure {
  title: string;
  description: string;
}

/** The texts, translated, of the action that failed. */
export interface FailureTitles {
  /** Title when the server refused (its message follows) or a check in the browser failed. */
  failed: string;
  /** Title when no answer came (no network, the 30 s timeout) or something broke before one was read; else `failed`. */
  error?: string;
  /** Description when the server sent no message; else the console's 'Unknown error'. */
  fallback?: string;
}

/**
 * The console's one failure policy (docs/console.md §8, decision 0047), for the global toast and for every
 * screen that reports its own failures (its calls pass `notify: false`, so that two toasts never race):
 * - 401 (the user is already on the way to sign in) and a call its caller cancelled: nothing;
 * - 403 and 5xx: the console's permission-denied and server-error texts, whatever the action;
 * - another 4xx: the action's `failed` title with the server's localised message, else `fallback`;
 * - no answer (network, timeout): the action's `error` title with the network text;
 * - a check in the browser: the `failed` title with its message; anything else: `error` with `fallback`.
 * The server's messages come in the page's language; every other text is the user's too (a browser's own
 * error text would not be).
 */
export function describeFailure(err: unknown, t: TFunction<FlatNamespace>, titles: FailureTitles): Failure | null {
  const common = (key: string) => t(key as ParseKeys<'common'>, { ns: 'common' });
  const errorTitle = titles.error ?? titles.failed;
  const fallback = titles.fallback ?? common('errors.other.description');
  if (err instanceof LocalCheckError) return { title: titles.failed, description: t(err.messageKey as never) };
  if (!(err instanceof ApiError)) return { title: errorTitle, description: fallback };
  switch (err.kind) {
    case 'unauthorized':
    case 'aborted':
      return null;
    case 'forbidden':
    case 'server':
      return { title: common(`errors.${err.kind}.title`), description: common(`errors.${err.kind}.description`) };
    case 'network':
      return { title: errorTitle, description: common('errors.network.description') };
    default:
      return { title: titles.failed, description: err.serverMessage || fallback };
  }
}

/** Shows describeFailure's toast, if there is one. */
export function showFailure(err: unknown, t: TFunction<FlatNamespace>, titles: FailureTitles): void {
  const failure = describeFailure(err, t, titles);
  if (failure) notify.error(failure.title, failure.description);
}

/**
 * Why a call failed, for a screen's own message (an inline text, or a toast the screen titles itself, such as
 * "Failed to load logs"): the server's localised message whenever it sent one (for a 403 or 5xx too: the screen's
 * own text says what was refused, docs/console.md §8), else the same network or unknown-error text as
 * describeFailure.
 */
export function failureText(err: unknown, t: TFunction<FlatNamespace>): string {
  if (err instanceof ApiError && err.serverMessage) return err.serverMessage;
  if (err instanceof ApiError && err.kind === 'network') return t('errors.network.description', { ns: 'common' });
  return t('errors.other.description', { ns: 'common' });
}

/** A refusal shown in the dialog that sent the request: the server's message, beside `field` when it named one. */
export interface Refusal<Field extends string | number | symbol = string> {
  field?: Field;
  message: string;
  /** The alert's title for a refusal without a field, when the dialog's own would not fit (a preview is no create). */
  title?: string;
}

/**
 * The server's refusal of a dialog's request (a 4xx other than 401, 403 and 404, with a message), for the
 * dialog to show inline and keep what was typed (decision 0058); the envelope's `field` is mapped onto the
 * form's field by `fieldOf`. Anything else (no answer, 403, 5xx) is not a refusal of the input: null, and
 * the caller shows its toast.
 */
export function refusalOf<Field extends string | number | symbol>(
  err: unknown,
  fieldOf: (serverField: string) => Field | undefined = () => undefined,
): Refusal<Field> | null {
  if (!(err instanceof ApiError) || err.kind !== 'other' || !err.serverMessage) return null;
  const field = err.field ? fieldOf(err.field) : undefined;
  return field === undefined ? { message: err.serverMessage } : { field, message: err.serverMessage };
}
