import type { Isolation, ServiceType } from '@toolport/contract';
import type { ParseKeys } from 'i18next';
import { checkStdioCommand } from './stdio-command';

/** The custom install dialog's fields (docs/console.md §3 "Custom service form"). */
export interface CustomServiceForm {
  name: string;
  type: ServiceType;
  command: string;
  environments: string;
  url: string;
  headers: string;
  /** stdio: one process shared by every client session, or one per session. */
  isolation: Isolation;
}

export const emptyCustomServiceForm: CustomServiceForm = {
  name: '',
  type: 'streamableHttp',
  command: '',
  environments: '',
  url: '',
  headers: '',
  isolation: 'shared',
};

/** The edit dialog's fields (docs/console.md §2.8); type and command line are shown, not edited. */
export interface EditServiceForm {
  displayName: string;
  description: string;
  type: ServiceType;
  environments: string;
  url: string;
  headers: string;
  /** stdio: one process shared by every client session, or one per session. */
  isolation: Isolation;
}

/** Field errors as keys of the services namespace, so they follow a language change while shown. */
export type FieldErrors<F> = Partial<Record<keyof F, ParseKeys<'services'>>>;

/** 'URL cannot be empty' / 'Please enter a valid URL' (docs/console.md §5): an http or https address. */
export function urlError(raw: string): ParseKeys<'services'> | undefined {
  const text = raw.trim();
  if (!text) return 'form.errors.urlRequired';
  try {
    const url = new URL(text);
    if ((url.protocol === 'http:' || url.protocol === 'https:') && url.hostname) return undefined;
  } catch {
    // falls through to the message below
  }
  return 'form.errors.urlInvalid';
}

/** docs/console.md §5 "Custom service": the name is required (its message is the placeholder text). */
export function validateCustomService(form: CustomServiceForm): FieldErrors<CustomServiceForm> {
  const errors: FieldErrors<CustomServiceForm> = {};
  if (!form.name.trim()) errors.name = 'form.namePlaceholder';
  if (form.type === 'stdio') {
    const check = checkStdioCommand(form.command);
    if (!check.ok) errors.command = `form.errors.${check.error}`;
  } else {
    const url = urlError(form.url);
    if (url) errors.url = url;
  }
  return errors;
}

/** docs/console.md §5 "Edit service": the display name is required; URL rules as for a custom service. */
export function validateEditService(form: EditServiceForm): FieldErrors<EditServiceForm> {
  const errors: FieldErrors<EditServiceForm> = {};
  if (!form.displayName.trim()) errors.displayName = 'form.errors.displayNameRequired';
  if (form.type !== 'stdio') {
    const url = urlError(form.url);
    if (url) errors.url = url;
  }
  return errors;
}

export const hasErrors = (errors: object): boolean => Object.keys(errors).length > 0;
