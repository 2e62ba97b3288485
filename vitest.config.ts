import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'server',
          root: './apps/server',
          include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
          environment: 'node',
          pool: 'forks',
          // Two on two cores. Three were faster (about 16 min for `npm test`) but made timing-sensitive suites flaky in
          // two of three full runs (docs/performance.md, "Test suite time").
          maxWorkers: 2,
          // Bounds for a loaded machine, not speed targets: on a slow day (docs/performance.md, 2026-11-29) tests that
          // take a few seconds took over 30.
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
      {
        test: {
          name: 'contract',
          root: './packages/contract',
          include: ['src/**/*.test.ts'],
          environment: 'node',
          // Vitest refuses projects with different maxWorkers in one group: all of them share the setting.
          maxWorkers: 2,
        },
      },
      {
        test: {
          name: 'scripts',
          root: './scripts',
          include: ['**/*.test.mjs'],
          environment: 'node',
          maxWorkers: 2,
        },
      },
      {
        // The console's own Vite config (React, Tailwind) with a browser-like DOM.
        extends: './apps/web/vite.config.ts',
        test: {
          name: 'web',
          root: './apps/web',
          include: ['src/**/*.test.{ts,tsx}'],
          environment: 'jsdom',
          setupFiles: ['./src/test/setup.ts'],
          // A page test clicks through lazily loaded screens; beside the server suites on 2 cores that can pass 5 s.
          testTimeout: 20_000,
          // Same as the server project: Vitest runs projects with equal maxWorkers side by side.
          maxWorkers: 2,
        },
      },
    ],
  },
});
