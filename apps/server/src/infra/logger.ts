import pino, { type Logger } from 'pino';
import pretty from 'pino-pretty';

/** Paths never written to a log line. Values are replaced, the keys stay so the shape is readable. */
export const redactPaths = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-api-key"]',
  'headers.authorization',
  'password',
  '*.password',
  'new_password',
  '*.new_password',
  'current_password',
  '*.current_password',
  'refresh_token',
  '*.refresh_token',
  'access_token',
  '*.access_token',
  'token',
  '*.token',
  'value',
  'secret',
  '*.secret',
];

const KEY_QUERY = /([?&](?:key|token|code|access_token)=)[^&#\s]*/gi;

/** Removes API keys and tokens carried in a query string (`?key=…`) from a URL before it is logged. */
export const redactUrl = (url: string): string => url.replace(KEY_QUERY, '$1[REDACTED]');

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      redact: { paths: redactPaths, censor: '[REDACTED]' },
      base: { service: 'toolport' },
      timestamp: pino.stdTimeFunctions.isoTime,
      serializers: {
        req: (req: { method: string; url: string; ip?: string }) => ({ method: req.method, url: redactUrl(req.url), ip: req.ip }),
        res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
        err: pino.stdSerializers.err,
      },
    },
    destination,
  );
}

/**
 * Where `toolport start` writes its log: readable coloured lines (pino-pretty, written synchronously
 * so that nothing is lost on exit) when `format` is 'pretty', or when it is unset and standard
 * output is a terminal; JSON lines otherwise, for log collectors. Redaction applies to both: it
 * happens before the line is formatted.
 */
export function logDestination(
  format: 'json' | 'pretty' | undefined,
  isTty = process.stdout.isTTY === true,
  out?: NodeJS.WritableStream,
): pino.DestinationStream | undefined {
  const readable = format === 'pretty' || (format === undefined && isTty);
  if (!readable) return undefined;
  return pretty({
    // Colours only for a terminal: LOG_FORMAT=pretty into a file gets plain readable lines.
    colorize: isTty,
    sync: true,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname,service',
    ...(out ? { destination: out } : {}),
  });
}
