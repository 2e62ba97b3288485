import pino, { type Logger } from 'pino';

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
