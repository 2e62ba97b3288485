import { spawn } from 'node:child_process';
import { LocalisedError } from '../../../i18n/localised-error.js';

/** Where an install step's output goes, one line at a time (the installer redacts and stores it). */
export type LineSink = (line: string) => void;

export interface RunOptions {
  cwd: string;
  env: Record<string, string>;
  /** The whole step is given up (and its process group killed) after this long. */
  timeoutMs: number;
  onLine: LineSink;
  /** Aborting kills the step, as a timeout does. */
  signal?: AbortSignal;
}

/** An install step that did not succeed, in words of ours (its command, its exit code, the time it had). */
export class CommandFailedError extends LocalisedError {}

/** A line longer than this is cut: install tools print progress bars and minified stack traces. */
const MAX_LINE = 4000;
const KILL_GRACE_MS = 3000;

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // ESRCH: the group is already empty.
  }
}

/** Splits a stream into lines; a trailing partial line is flushed on end. */
function lineReader(onLine: LineSink): { push(chunk: Buffer): void; end(): void } {
  let rest = '';
  const emit = (line: string) => {
    // Colour and cursor escapes of install tools are noise in a stored log.
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the escape character is exactly what is removed.
    const text = line.replace(/\r$/, '').replace(/\u001b\[[0-9;?]*[A-Za-z]/g, '');
    if (text.trim()) onLine(text.length > MAX_LINE ? `${text.slice(0, MAX_LINE)}…` : text);
  };
  return {
    push(chunk) {
      const parts = (rest + chunk.toString('utf8')).split('\n');
      rest = parts.pop() ?? '';
      for (const part of parts) emit(part);
      if (rest.length > 64 * 1024) {
        emit(rest);
        rest = '';
      }
    },
    end() {
      if (rest) emit(rest);
      rest = '';
    },
  };
}

/**
 * Runs one install step (`npm install …`, `python3 -m venv …`) as an argument array, never through a
 * shell, in a process group of its own: a timeout or an abort kills everything it started (install
 * scripts included). Every stdout and stderr line reaches `onLine`. Rejects with CommandFailedError
 * on a non-zero exit, a timeout or an abort.
 */
export function runCommand(command: string, args: string[], opts: RunOptions): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: opts.cwd, env: opts.env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    const out = lineReader(opts.onLine);
    const err = lineReader(opts.onLine);
    let stopped: CommandFailedError | undefined;
    let settled = false;
    const stop = (why: CommandFailedError) => {
      if (stopped || child.pid === undefined) return;
      stopped = why;
      signalGroup(child.pid, 'SIGTERM');
      setTimeout(() => child.pid !== undefined && signalGroup(child.pid, 'SIGKILL'), KILL_GRACE_MS).unref();
    };
    const timer = setTimeout(
      () => stop(new CommandFailedError('install.command_timeout', { command, seconds: Math.round(opts.timeoutMs / 1000) })),
      opts.timeoutMs,
    );
    const onAbort = () => stop(new CommandFailedError('install.command_cancelled', { command }));
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    const done = (error?: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      out.end();
      err.end();
      if (error) reject(error);
      else resolve();
    };
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    child.once('error', (e) => done(new CommandFailedError('install.command_not_started', { command }, e.message)));
    child.once('close', (code, signal) => {
      // Whatever the leader left behind in its group (install scripts' children) goes with it.
      if (child.pid !== undefined) signalGroup(child.pid, 'SIGKILL');
      if (stopped) return done(stopped);
      if (code === 0) return done();
      done(
        signal
          ? new CommandFailedError('install.command_killed', { command, signal })
          : new CommandFailedError('install.command_exit', { command, code: code ?? -1 }),
      );
    });
    if (opts.signal?.aborted) onAbort();
  });
}
