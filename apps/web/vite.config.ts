import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import tailwindcss from '@tailwindcss/vite';
import react from '@vitejs/plugin-react';
import { defineConfig, type Plugin } from 'vite';

// `npm run dev -w @toolport/web` serves the console with hot reload; API and proxy calls go to a server
// started separately with `npm start` on its default port.
const server = 'http://localhost:3000';

/** Text files worth compressing; images and fonts in this console are already compressed formats. */
const COMPRESSIBLE = /\.(js|mjs|css|html|json|svg|txt|map)$/;
/** Below this, the compressed copy saves less than the headers it costs. */
const MIN_BYTES = 1024;

/**
 * Writes `<file>.br` and `<file>.gz` next to every compressible file of the build, once, at the highest
 * levels (the build pays the time, not each request). The server's static files plugin sends them when the
 * browser accepts them (apps/server/src/http/static.ts; decision 0023).
 */
function precompress(): Plugin {
  let outDir = 'dist';
  return {
    name: 'toolport-precompress',
    apply: 'build',
    configResolved(config) {
      outDir = path.resolve(config.root, config.build.outDir);
    },
    closeBundle() {
      const walk = (dir: string): void => {
        for (const entry of readdirSync(dir, { withFileTypes: true })) {
          const file = path.join(dir, entry.name);
          if (entry.isDirectory()) walk(file);
          else if (COMPRESSIBLE.test(entry.name) && statSync(file).size >= MIN_BYTES) {
            const body = readFileSync(file);
            writeFileSync(`${file}.br`, brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }));
            writeFileSync(`${file}.gz`, gzipSync(body, { level: 9 }));
          }
        }
      };
      walk(outDir);
    },
  };
}

export default defineConfig({
  plugins: [react(), tailwindcss(), precompress()],
  server: { proxy: { '/api': server, '/proxy': server } },
  build: { outDir: 'dist', emptyOutDir: true },
});
