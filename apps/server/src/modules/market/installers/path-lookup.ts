import { accessSync, constants, statSync } from 'node:fs';
import path from 'node:path';

/** The absolute path of an executable found on PATH, as a shell would find it; '' when there is none. */
export function findExecutable(name: string, pathVar: string | undefined = process.env.PATH): string {
  if (!name || name.includes('/') || name.includes('\\')) return '';
  for (const dir of (pathVar ?? '').split(path.delimiter)) {
    if (!dir || !path.isAbsolute(dir)) continue;
    const candidate = path.join(dir, name);
    if (isExecutableFile(candidate)) return candidate;
  }
  return '';
}

export function isExecutableFile(file: string): boolean {
  try {
    if (!statSync(file).isFile()) return false;
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
