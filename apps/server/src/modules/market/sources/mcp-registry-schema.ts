import { z } from 'zod';

/**
 * The MCP Registry v0.1 response shapes this server reads (modelcontextprotocol/registry,
 * docs/reference/api/openapi.yaml: ServerList, ServerResponse, ServerDetail, Package,
 * KeyValueInput, Argument, RemoteTransport). Fields the server does not use are left out;
 * optional ones default, so an entry published with fewer fields still reads.
 */
const Input = z.object({
  name: z.string().optional(),
  description: z.string().optional(),
  isRequired: z.boolean().optional(),
  isSecret: z.boolean().optional(),
  default: z.string().optional(),
  value: z.string().optional(),
});

export const KeyValueInput = Input.extend({ name: z.string() });
export type KeyValueInput = z.infer<typeof KeyValueInput>;

export const Argument = Input.extend({
  type: z.string().optional(),
  valueHint: z.string().optional(),
});
export type Argument = z.infer<typeof Argument>;

export const RegistryPackage = z.object({
  registryType: z.string(),
  registryBaseUrl: z.string().optional(),
  identifier: z.string(),
  version: z.string().optional(),
  runtimeHint: z.string().optional(),
  transport: z.object({ type: z.string() }).loose().optional(),
  runtimeArguments: z.array(Argument).optional(),
  packageArguments: z.array(Argument).optional(),
  environmentVariables: z.array(KeyValueInput).optional(),
});
export type RegistryPackage = z.infer<typeof RegistryPackage>;

/** A `{name}` of a remote's URL template: what the user must (or may) fill in (server.json `remotes[].variables`). */
export const UrlVariable = Input.extend({ choices: z.array(z.string()).optional() });
export type UrlVariable = z.infer<typeof UrlVariable>;

export const RegistryRemote = z.object({
  type: z.string(),
  url: z.string(),
  headers: z.array(KeyValueInput).optional(),
  variables: z.record(z.string(), UrlVariable).optional().catch(undefined),
});
export type RegistryRemote = z.infer<typeof RegistryRemote>;

export const ServerDetail = z.object({
  name: z.string(),
  description: z.string().catch(''),
  title: z.string().optional(),
  version: z.string().catch(''),
  websiteUrl: z.string().optional(),
  repository: z.object({ url: z.string().optional(), source: z.string().optional(), subfolder: z.string().optional() }).optional(),
  packages: z.array(RegistryPackage).catch([]),
  remotes: z.array(RegistryRemote).catch([]),
});
export type ServerDetail = z.infer<typeof ServerDetail>;

const Official = z
  .object({
    status: z.string().optional(),
    publishedAt: z.string().optional(),
    updatedAt: z.string().optional(),
    isLatest: z.boolean().optional(),
  })
  .optional();

export const ServerResponse = z.object({
  server: ServerDetail,
  _meta: z.object({ 'io.modelcontextprotocol.registry/official': Official }).loose().optional(),
});
export type ServerResponse = z.infer<typeof ServerResponse>;

export const ServerList = z.object({
  servers: z.array(z.unknown()),
  metadata: z.object({ nextCursor: z.string().nullish(), count: z.number().optional() }).optional(),
});
