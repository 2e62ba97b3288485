import tailwindcss from '@tailwindcss/vite';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// `npm run dev -w @toolport/web` serves the console with hot reload; API and proxy calls go to a server
// started separately with `npm start` on its default port.
const server = 'http://localhost:3000';

export default defineConfig({
  plugins: [react(), tailwindcss()],
  server: { proxy: { '/api': server, '/proxy': server } },
  build: { outDir: 'dist', emptyOutDir: true },
});
