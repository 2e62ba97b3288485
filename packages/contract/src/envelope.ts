import { z } from 'zod';

/** Every JSON answer of the API: `{success, message?, data?}` with a real HTTP status. */
export const envelope = <T extends z.ZodType>(data: T) =>
  z.object({
    success: z.boolean(),
    message: z.string().optional(),
    data: data.optional(),
  });

export const ErrorEnvelope = z.object({
  success: z.literal(false),
  message: z.string(),
  code: z.string().optional(),
  /** The request's field the refusal is about, when it is about one (decision 0058). */
  field: z.string().optional(),
  data: z.unknown().optional(),
});
export type ErrorEnvelope = z.infer<typeof ErrorEnvelope>;

export const OkEnvelope = z.object({ success: z.literal(true), message: z.string().optional() });

/** The envelope as a client reads any answer: a success's `data`, a failure's `message`, `code` and `data`. */
export interface ApiEnvelope<T = unknown> {
  success: boolean;
  message?: string;
  code?: string;
  /** A failure's field of the request, when the refusal is about one (decision 0058). */
  field?: string;
  data?: T;
  /** What went partly wrong in a success (a search whose sources did not all answer). */
  warnings?: { source?: string; message: string }[];
}
