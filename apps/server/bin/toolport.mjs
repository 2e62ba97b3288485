#!/usr/bin/env node
// The `toolport` command: runs the bundled server (built by `npm run build`).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const bundle = fileURLToPath(new URL('../dist/main.js', import.meta.url));
if (!existsSync(bundle)) {
  process.stderr.write('toolport: the server is not built yet; run `npm run build` (or `npm start`) first\n');
  process.exit(1);
}
await import(bundle);
