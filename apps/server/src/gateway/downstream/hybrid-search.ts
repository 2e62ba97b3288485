import type { SearchableTool, ToolHit } from './tool-search.js';

/**
 * Semantic ranking of discovery search (issue 28, item 2; docs/decisions/0046), as the gateway asks
 * it: the port an embeddings provider is reached through (modules/embeddings implements it). Without
 * one, or whenever it cannot answer at once, search stays lexical.
 */
export interface SemanticRanker {
  /**
   * The tools (their indexes in `tools`) by closeness of meaning to the query, best first, and how far
   * the best one stands out of the rest (its similarity's distance from their median, in robust
   * standard deviations); or why not now: no provider set (`off`), the provider slow or down, the tools' vectors
   * not computed yet.
   */
  rank(tools: readonly SearchableTool[], query: string): Promise<SemanticRanking>;
}

export type SemanticRanking = { order: number[]; confidence: number } | { unavailable: string; off?: boolean };

/** Reciprocal rank fusion's constant: ranks below it weigh almost alike, as in the original paper (k = 60). */
export const RRF_K = 60;
/** How many lexical hits take part in the fusion. */
export const FUSION_DEPTH = 50;
/**
 * What a place in the semantic ranking weighs beside the same place in the lexical one, and how many
 * of its places count. Both small: the query's own words and the vocabulary stay first, and meaning
 * re-orders what they found or fills in where they found little. Equal weights and depths let a model
 * that knows less than the vocabulary (the evaluation's hashing model) push good lexical hits out of
 * the first five (docs/performance.md).
 */
export const SEMANTIC_WEIGHT = 0.5;
export const SEMANTIC_DEPTH = 5;
/**
 * The semantic ranking takes part only when its best tool stands out of the bulk of the others by
 * this many robust standard deviations. A model's guess among tools none of which fits lies about
 * there or below; on the evaluation set with the hashing model, a lower bar let noise push good
 * lexical hits out and a higher one kept out clear matches in small groups (docs/performance.md).
 */
export const SEMANTIC_CONFIDENCE = 3;

/**
 * Weighted reciprocal rank fusion of the lexical hits and the semantic order: each tool scores
 * 1 / (RRF_K + its lexical rank) plus SEMANTIC_WEIGHT / (RRF_K + its semantic rank), over the
 * rankings it is in. A tool only one ranking found still takes part, so a
 * paraphrase no word of which the tool uses can rise on meaning alone.
 */
export function fuse<T extends SearchableTool>(
  tools: readonly T[],
  lexical: readonly ToolHit<T>[],
  semantic: readonly number[],
  keep: (tool: T) => boolean,
  limit: number,
): ToolHit<T>[] {
  const position = new Map<T, number>();
  tools.forEach((t, i) => {
    position.set(t, i);
  });
  const fused = new Map<number, { score: number; coverage: number }>();
  lexical.slice(0, FUSION_DEPTH).forEach((hit, rank) => {
    const i = position.get(hit.tool);
    if (i !== undefined) fused.set(i, { score: 1 / (RRF_K + rank + 1), coverage: hit.coverage });
  });
  let rank = 0;
  for (const i of semantic) {
    const tool = tools[i];
    if (!tool || !keep(tool)) continue;
    const seen = fused.get(i) ?? { score: 0, coverage: 0 };
    seen.score += SEMANTIC_WEIGHT / (RRF_K + rank + 1);
    fused.set(i, seen);
    rank += 1;
    if (rank >= SEMANTIC_DEPTH) break;
  }
  return [...fused]
    .sort(([ia, a], [ib, b]) => b.score - a.score || ia - ib)
    .slice(0, limit)
    .map(([i, { score, coverage }]) => ({ tool: tools[i] as T, score, coverage }));
}
