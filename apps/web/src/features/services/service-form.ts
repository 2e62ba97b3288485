import type { Isolation, ServiceType } from '@toolport/contract';
import type { ParseKeys } from 'i18next';
import type { Refusal } from '../../lib/failure';
import { emptyOpenApiFields, type OpenApiFields } from './openapi-form';
import { checkStdioCommand } from './stdio-command';

/** The custom install dialog's fields (docs/console.md §3 "Custom service form"); `url` is an OpenAPI document's too. */
export interface CustomServiceForm extends OpenApiFields {
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
  ...emptyOpenApiFields,
};

/** The edit dialog's fields (docs/console.md §2.8); type and command line are shown, not edited. */
export interface EditServiceForm extends OpenApiFields {
  /** openapi: the service runs an uploaded document, which it keeps while no other file is chosen. */
  uploadKept: boolean;
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

/** A service dialog's form as `useDialogForm` keeps it, its one refusal included (decision 0058). */
export interface ServiceDialogState<F> {
  form: F;
  errors: FieldErrors<F>;
  setErrors(errors: FieldErrors<F>): void;
  edit(field: keyof F): (value: string) => void;
  refusal: Refusal<keyof F> | null;
  setRefusal(refusal: Refusal<keyof F> | null): void;
  refusedFor(field: keyof F): string | undefined;
}

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

/**
 * docs/console.md §5 "OpenAPI service": a valid document URL, or a file (an edit may keep the uploaded one);
 * a base URL, when given, a valid http(s) address; the header or parameter's name for those schemes.
 */
export function validateOpenApi(form: OpenApiFields & { url: string }, keepsUpload = false): FieldErrors<OpenApiFields & { url: string }> {
  const errors: FieldErrors<OpenApiFields & { url: string }> = {};
  if (form.source === 'url') {
    const url = urlError(form.url);
    if (url) errors.url = url;
  } else if (!form.document && !keepsUpload) errors.fileName = 'form.errors.fileRequired';
  if (form.baseUrl.trim()) {
    const base = urlError(form.baseUrl);
    if (base) errors.baseUrl = base;
  }
  if ((form.auth === 'header' || form.auth === 'query') && !form.authName.trim()) errors.authName = 'form.errors.authNameRequired';
  if (form.auth === 'basic' && !form.username.trim()) errors.username = 'form.errors.usernameRequired';
  if (form.auth !== 'none' && !form.secret) errors.secret = 'form.errors.secretRequired';
  return errors;
}

/** docs/console.md §5 "Custom service": the name is required (its message is the placeholder text). */
export function validateCustomService(form: CustomServiceForm): FieldErrors<CustomServiceForm> {
  const errors: FieldErrors<CustomServiceForm> = {};
  if (!form.name.trim()) errors.name = 'form.namePlaceholder';
  if (form.type === 'stdio') {
    const check = checkStdioCommand(form.command);
    if (!check.ok) errors.command = `form.errors.${check.error}`;
  } else if (form.type === 'openapi') {
    Object.assign(errors, validateOpenApi(form));
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
  if (form.type === 'openapi') Object.assign(errors, validateOpenApi(form, form.uploadKept));
  else if (form.type !== 'stdio') {
    const url = urlError(form.url);
    if (url) errors.url = url;
  }
  return errors;
}

export const hasErrors = (errors: object): boolean => Object.keys(errors).length > 0;
