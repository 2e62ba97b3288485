/**
 * What an OpenAPI service runs from (docs/openapi.md): the document compiled once, when the service is
 * created, into one entry per operation. The gateway never parses the document again; the row keeps this
 * plan as JSON (`services.openapi_json`).
 */
export interface OpenApiPlan {
  /** Where the document came from ('' when it was uploaded as text). */
  sourceUrl: string;
  /** The document as uploaded (kept for export), '' when it came from `sourceUrl`. */
  document: string;
  /** The filter the admin chose, as given (kept for export). */
  filter: OperationFilter;
  /** The document's `info.title` and `info.version`. */
  title: string;
  version: string;
  /** Every request goes under this URL (the override, else the document's first server). */
  baseUrl: string;
  /** The override the admin gave ('' when the document's server is used; absent in plans made before it was kept). */
  baseUrlOverride?: string;
  operations: OpenApiOperation[];
}

/** Operations kept: any tag, path or operation id listed (an empty filter keeps all). */
export interface OperationFilter {
  tags?: string[];
  paths?: string[];
  operation_ids?: string[];
}

export type ParameterPlace = 'path' | 'query' | 'header';

/** One operation as a tool. */
export interface OpenApiOperation {
  /** The tool's name (MCP tool-name rules). */
  name: string;
  description: string;
  method: string;
  /** The path template, `{name}` for path parameters. */
  path: string;
  inputSchema: Record<string, unknown>;
  /** Each parameter: where it goes, its name there, and the argument that carries it. */
  params: { in: ParameterPlace; name: string; arg: string; required: boolean }[];
  /** The request body: the argument carrying it and the media type it is sent as. */
  body?: { arg: string; contentType: string; required: boolean };
}
