import type { InstalledService, OperationFilter } from '@toolport/contract';
import type { ParseKeys } from 'i18next';
import { parseJsonObject } from './key-values';

/** The mask the server shows and takes back for a stored secret (`keepMasked`, modules/services/service.ts). */
export const SECRET_MASK = '********';
/** The server refuses documents past 2 MiB (docs/openapi.md); a larger file is refused before it is sent. */
export const MAX_DOCUMENT_BYTES = 2 * 1024 * 1024;

/** The variables the server reads as bearer and basic credentials (docs/openapi.md "Credentials"). */
const BEARER = 'OPENAPI_BEARER_TOKEN';
const BASIC_USER = 'OPENAPI_BASIC_USERNAME';
const BASIC_PASSWORD = 'OPENAPI_BASIC_PASSWORD';

export const openApiAuths = ['none', 'header', 'query', 'bearer', 'basic'] as const;
export type OpenApiAuth = (typeof openApiAuths)[number];

/**
 * The OpenAPI service's fields of the custom and edit dialogs (docs/console.md §2.7, §2.8); the document's URL is
 * the form's `url`. One authentication scheme maps onto the service's headers and variables as docs/openapi.md says.
 */
export interface OpenApiFields {
  /** The document from its URL, or an uploaded file (its text in `document`). */
  source: 'url' | 'file';
  document: string;
  /** The chosen file's name ('' when none was chosen in this dialog). */
  fileName: string;
  baseUrl: string;
  auth: OpenApiAuth;
  /** header: the header's name; query: the parameter's name. */
  authName: string;
  /** The header or parameter value, the bearer token or the basic password; `SECRET_MASK` keeps the stored one. */
  secret: string;
  /** basic: the user name. */
  username: string;
  /** The operation filter, each a comma-separated list. */
  tags: string;
  paths: string;
  operationIds: string;
}

export const emptyOpenApiFields: OpenApiFields = {
  source: 'url',
  document: '',
  fileName: '',
  baseUrl: '',
  auth: 'none',
  authName: '',
  secret: '',
  username: '',
  tags: '',
  paths: '',
  operationIds: '',
};

const list = (text: string): string[] =>
  text
    .split(',')
    .map((v) => v.trim())
    .filter(Boolean);

/** The filter as the API takes it: only the lists given (none: every operation). */
export function operationFilterOf(fields: Pick<OpenApiFields, 'tags' | 'paths' | 'operationIds'>): OperationFilter {
  const filter: OperationFilter = {};
  const tags = list(fields.tags);
  const paths = list(fields.paths);
  const operationIds = list(fields.operationIds);
  if (tags.length) filter.tags = tags;
  if (paths.length) filter.paths = paths;
  if (operationIds.length) filter.operation_ids = operationIds;
  return filter;
}

/** The scheme's headers and variables, beside those the service has besides (kept as they are). */
export function credentialsOf(
  fields: Pick<OpenApiFields, 'auth' | 'authName' | 'secret' | 'username'>,
  others: { headers: Record<string, string>; env: Record<string, string> } = { headers: {}, env: {} },
): { headers: Record<string, string>; environments: Record<string, string> } {
  const headers = { ...others.headers };
  const environments = { ...others.env };
  const name = fields.authName.trim();
  if (fields.auth === 'header' && name) headers[name] = fields.secret;
  if (fields.auth === 'query' && name) environments[name] = fields.secret;
  if (fields.auth === 'bearer') environments[BEARER] = fields.secret;
  if (fields.auth === 'basic') Object.assign(environments, { [BASIC_USER]: fields.username.trim(), [BASIC_PASSWORD]: fields.secret });
  return { headers, environments };
}

/** The document and what is kept of it, as both the create (and its preview) and the edit send them. */
export function documentRequestOf(fields: OpenApiFields & { url: string }) {
  return {
    ...(fields.source === 'url' ? { url: fields.url.trim() } : { document: fields.document }),
    base_url: fields.baseUrl.trim(),
    operation_filter: operationFilterOf(fields),
  };
}

/**
 * A stored service's scheme, read back from its headers and variables: the bearer or basic variables, else its
 * first header, else its first other variable (a query parameter). The rest is kept as it is on save. A stored
 * secret is shown as the mask, which the server keeps.
 */
export function openApiFieldsOf(service: InstalledService): { fields: OpenApiFields; url: string } {
  const headers = parseJsonObject(service.headers_json);
  const env = parseJsonObject(service.default_envs_json);
  const masked = (value: string | undefined) => (value ? SECRET_MASK : '');
  const settings = service.openapi;
  const filter = settings?.operation_filter ?? {};
  const base: OpenApiFields = {
    ...emptyOpenApiFields,
    source: settings?.uploaded ? 'file' : 'url',
    baseUrl: settings?.base_url_override ?? '',
    tags: (filter.tags ?? []).join(', '),
    paths: (filter.paths ?? []).join(', '),
    operationIds: (filter.operation_ids ?? []).join(', '),
  };
  const url = settings?.uploaded ? '' : service.command;
  if (env[BEARER] !== undefined) return { url, fields: { ...base, auth: 'bearer', secret: masked(env[BEARER]) } };
  if (env[BASIC_USER] !== undefined || env[BASIC_PASSWORD] !== undefined)
    return { url, fields: { ...base, auth: 'basic', username: env[BASIC_USER] ?? '', secret: masked(env[BASIC_PASSWORD]) } };
  const header = Object.keys(headers)[0];
  if (header !== undefined) return { url, fields: { ...base, auth: 'header', authName: header, secret: masked(headers[header]) } };
  const query = Object.keys(env)[0];
  if (query !== undefined) return { url, fields: { ...base, auth: 'query', authName: query, secret: masked(env[query]) } };
  return { url, fields: base };
}

/** What the service has beside the scheme the dialog shows (openApiFieldsOf's choice), sent back unchanged. */
export function otherCredentialsOf(service: InstalledService): { headers: Record<string, string>; env: Record<string, string> } {
  const { fields } = openApiFieldsOf(service);
  const headers = parseJsonObject(service.headers_json);
  const env = parseJsonObject(service.default_envs_json);
  if (fields.auth === 'bearer') delete env[BEARER];
  if (fields.auth === 'basic') {
    delete env[BASIC_USER];
    delete env[BASIC_PASSWORD];
  }
  if (fields.auth === 'header') delete headers[fields.authName];
  if (fields.auth === 'query') delete env[fields.authName];
  return { headers, env };
}

/** A file's text, refused when larger than the server takes (the key of the reason). */
export async function readDocumentFile(file: File): Promise<{ text: string } | { error: ParseKeys<'services'> }> {
  if (file.size > MAX_DOCUMENT_BYTES) return { error: 'form.errors.fileTooLarge' };
  try {
    return { text: await file.text() };
  } catch {
    return { error: 'form.errors.fileUnreadable' };
  }
}
