import path from 'node:path';

/**
 * Where an installed package lives, as `services.install_dir` keeps it. A package installed under
 * DATA_DIR is stored relative to it (`packages/npm/<name>`) and the paths of its command line relative
 * to the install directory (`./node_modules/…`), where its process runs: every replica and every
 * DATA_DIR path that has the files starts it. Rows written before are absolute and are used as they are.
 */

/** The form to store: relative to DATA_DIR when `dir` lies inside it, else `dir` itself. */
export function storedInstallDir(dataDir: string, dir: string): string {
  if (!dir) return '';
  const rel = path.relative(path.resolve(dataDir), path.resolve(dir));
  if (!rel || rel.startsWith('..') || path.isAbsolute(rel)) return dir;
  return rel.split(path.sep).join('/');
}

/** The directory a stored install_dir names on this instance ('' for none). */
export function resolveInstallDir(dataDir: string, stored: string): string {
  if (!stored) return '';
  return path.isAbsolute(stored) ? stored : path.resolve(dataDir, stored);
}

/** A command or argument naming a file inside `dir`, as a path relative to it (the process's working directory); anything else unchanged. */
export function relativeToInstallDir(dir: string, value: string): string {
  const root = path.resolve(dir);
  if (!path.isAbsolute(value) || !value.startsWith(`${root}${path.sep}`)) return value;
  return `./${path.relative(root, value).split(path.sep).join('/')}`;
}
