import type { FetchLike } from '../../infra/outbound.js';

/**
 * An OpenAI-compatible embeddings endpoint (`POST {base}/embeddings`, decision 0046): OpenAI, Ollama,
 * vLLM, SiliconFlow, DashScope, Zhipu and the rest speak the same wire format. Every request goes
 * through infra/outbound.ts; its answer is checked before a vector is believed.
 */
export interface ProviderConfig {
  /** The base URL as the admin set it, e.g. https://api.openai.com/v1 or http://127.0.0.1:11434/v1. */
  url: string;
  model: string;
  apiKey: string;
  /** 0: the model's own size. */
  dimensions: number;
  /** How long a search waits for its query's vector. */
  timeoutMs: number;
}

export type FailureReason = 'timeout' | 'http' | 'network' | 'invalid_answer';

/** Why the provider gave no vectors; `detail` never holds the API key. */
export class EmbeddingsFailure extends Error {
  constructor(
    readonly reason: FailureReason,
    readonly detail: string,
  ) {
    super(`${reason}: ${detail}`);
  }
}

const MAX_DETAIL = 300;

/** Unit-length vectors of `texts`, in their order, or an EmbeddingsFailure. */
export async function embed(
  fetchFn: FetchLike,
  config: ProviderConfig,
  texts: readonly string[],
  timeoutMs: number,
): Promise<Float32Array[]> {
  const hide = (text: string) => (config.apiKey ? text.split(config.apiKey).join('[REDACTED]') : text).slice(0, MAX_DETAIL);
  let res: Response;
  try {
    res = await fetchFn(`${config.url}/embeddings`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(config.apiKey ? { authorization: `Bearer ${config.apiKey}` } : {}),
      },
      body: JSON.stringify({
        model: config.model,
        input: texts,
        encoding_format: 'float',
        ...(config.dimensions > 0 ? { dimensions: config.dimensions } : {}),
      }),
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (err) {
    const name = (err as { name?: string }).name;
    if (name === 'TimeoutError' || name === 'AbortError') throw new EmbeddingsFailure('timeout', `no answer within ${timeoutMs} ms`);
    throw new EmbeddingsFailure(
      'network',
      hide(err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : String(err)),
    );
  }
  const body = await res.text().catch(() => '');
  if (!res.ok) throw new EmbeddingsFailure('http', hide(`HTTP ${res.status}: ${body.replace(/\s+/g, ' ').trim()}`));
  return vectorsOf(body, texts.length, config.dimensions);
}

/** The `data` of an embeddings answer as unit vectors by `index`, all of one size (the asked one, when asked). */
function vectorsOf(body: string, count: number, dimensions: number): Float32Array[] {
  let parsed: { data?: unknown };
  try {
    parsed = JSON.parse(body) as { data?: unknown };
  } catch {
    throw new EmbeddingsFailure('invalid_answer', 'the answer is not JSON');
  }
  const data = Array.isArray(parsed.data) ? (parsed.data as { embedding?: unknown; index?: unknown }[]) : undefined;
  if (!data || data.length !== count) throw new EmbeddingsFailure('invalid_answer', `expected ${count} embeddings in "data"`);
  const out: Float32Array[] = new Array(count);
  let size = dimensions || undefined;
  data.forEach((item, position) => {
    const at = typeof item?.index === 'number' ? item.index : position;
    const values = item?.embedding;
    if (!Array.isArray(values) || values.length === 0 || !values.every((v) => typeof v === 'number' && Number.isFinite(v)))
      throw new EmbeddingsFailure('invalid_answer', 'an embedding is not a list of numbers');
    size ??= values.length;
    if (values.length !== size) throw new EmbeddingsFailure('invalid_answer', `an embedding has ${values.length} dimensions, not ${size}`);
    if (at < 0 || at >= count || out[at])
      throw new EmbeddingsFailure('invalid_answer', 'the embeddings\u2019 indexes do not match the input');
    out[at] = unit(values as number[]);
  });
  return out;
}

function unit(values: number[]): Float32Array {
  const v = Float32Array.from(values);
  let norm = 0;
  for (const x of v) norm += x * x;
  norm = Math.sqrt(norm) || 1;
  for (let i = 0; i < v.length; i++) v[i] = (v[i] as number) / norm;
  return v;
}
