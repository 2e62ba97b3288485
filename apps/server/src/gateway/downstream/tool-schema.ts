/**
 * One bad tool never breaks a list (issue 28, item 4; docs/decisions/0046). The official SDK clients
 * validate a whole `tools/list` answer against the MCP schema and reject all of it when one tool is
 * off: an `inputSchema` of `{}` (Sentry's `whoami`), a property schema that is `true`, an output
 * schema without `type: 'object'`. Every face (`/proxy`, groups, discovery) sends its members' tools
 * through here: what can be repaired without changing what the tool accepts is repaired, what cannot
 * is left out, and each is told once in the service's log.
 */

export interface SchemaNote {
  tool: string;
  action: 'repaired' | 'dropped';
  reason: string;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A JSON Schema object for arguments or output, repaired in place of a copy; a string when it cannot be. */
function objectSchema(schema: Obj, which: string, notes: string[]): Obj | string {
  const out: Obj = { ...schema };
  if (out.type === undefined) {
    out.type = 'object';
    notes.push(`${which} had no type: taken as an object`);
  } else if (out.type !== 'object') return `${which} is of type ${JSON.stringify(out.type)}, where MCP asks for an object`;
  if (out.properties !== undefined) {
    if (!isObj(out.properties)) return `${which} has properties that are not an object`;
    const properties: Obj = {};
    for (const [name, prop] of Object.entries(out.properties)) {
      // JSON Schema allows true / false as a schema; the SDK clients want objects: {} and {not: {}} say the same.
      if (prop === true || prop === false) {
        properties[name] = prop ? {} : { not: {} };
        notes.push(`${which} property "${name}" was ${prop}: written as an object schema`);
      } else if (isObj(prop)) properties[name] = prop;
      else return `${which} property "${name}" is not a schema`;
    }
    out.properties = properties;
  }
  if (out.required !== undefined) {
    const strings = Array.isArray(out.required) ? out.required.filter((r): r is string => typeof r === 'string') : [];
    if (!Array.isArray(out.required) || strings.length !== out.required.length) {
      out.required = strings;
      notes.push(`${which} "required" was not a list of names: kept its names only`);
    }
  }
  return out;
}

/** Optional fields of a tool that are left out when they are not of their type. */
const OPTIONAL: [string, (v: unknown) => boolean][] = [
  ['title', (v) => typeof v === 'string'],
  ['description', (v) => typeof v === 'string'],
  ['annotations', isObj],
  ['icons', Array.isArray],
  ['execution', isObj],
  ['_meta', isObj],
];

/** One tool as a strict client accepts it, or why it is left out; `notes` receives what was repaired. */
export function normaliseTool(tool: unknown, notes: string[]): { tool: Obj } | { dropped: string } {
  if (!isObj(tool) || typeof tool.name !== 'string' || tool.name === '') return { dropped: 'it has no name' };
  const out: Obj = { ...tool };
  for (const [field, valid] of OPTIONAL) {
    if (out[field] !== undefined && !valid(out[field])) {
      delete out[field];
      notes.push(`${field} was not valid: left out`);
    }
  }
  if (!isObj(out.inputSchema)) {
    notes.push(out.inputSchema === undefined ? 'it had no input schema: takes an object' : 'its input schema was not an object');
    out.inputSchema = { type: 'object' };
  } else {
    const input = objectSchema(out.inputSchema, 'input schema', notes);
    if (typeof input === 'string') return { dropped: input };
    out.inputSchema = input;
  }
  if (out.outputSchema !== undefined) {
    // A client checks structured results against an output schema; without one it checks nothing.
    const output = isObj(out.outputSchema) ? objectSchema(out.outputSchema, 'output schema', notes) : 'output schema is not an object';
    if (typeof output === 'string') {
      delete out.outputSchema;
      notes.push(`${output}: output schema left out`);
    } else out.outputSchema = output;
  }
  return { tool: out };
}

/** A list of tools as strict clients accept it; the tools that needed no change are the very same objects. */
export function normaliseTools(tools: readonly unknown[]): { tools: Obj[]; notes: SchemaNote[] } {
  const out: Obj[] = [];
  const notes: SchemaNote[] = [];
  for (const tool of tools) {
    const said: string[] = [];
    const name = isObj(tool) && typeof tool.name === 'string' ? tool.name : '(unnamed)';
    const fixed = normaliseTool(tool, said);
    if ('dropped' in fixed) {
      notes.push({ tool: name, action: 'dropped', reason: fixed.dropped });
      continue;
    }
    out.push(said.length === 0 ? (tool as Obj) : fixed.tool);
    for (const reason of said) notes.push({ tool: name, action: 'repaired', reason });
  }
  return { tools: out, notes };
}

/** Where a service's notes go: its log (the console's Logs screen) and the gateway's. */
export type SchemaNoteSink = (service: { id: number; name: string }, note: SchemaNote) => void;

/**
 * A `tools/list` answer made acceptable to strict clients. Each note is told once per service, tool
 * and reason (a list is asked for again and again); the memory of what was told is bounded.
 */
export class ToolListNormaliser {
  private readonly told = new Set<string>();

  constructor(private readonly sink: SchemaNoteSink) {}

  apply<M extends object>(service: { id: number; name: string }, message: M): M {
    const result = (message as { result?: unknown }).result;
    if (!isObj(result) || !Array.isArray(result.tools)) return message;
    const { tools, notes } = normaliseTools(result.tools);
    for (const note of notes) {
      const key = `${service.id}\u0000${note.tool}\u0000${note.reason}`;
      if (this.told.has(key)) continue;
      if (this.told.size >= 10_000) this.told.clear();
      this.told.add(key);
      this.sink(service, note);
    }
    return notes.length === 0 ? message : { ...message, result: { ...result, tools } };
  }
}
