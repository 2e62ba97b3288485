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
          // Three on two cores: the suites wait on processes, servers and timeouts more than they compute (about 1.25
          // cores were busy with two workers; docs/performance.md, "Test suite time").
          maxWorkers: 3,
          testTimeout: 30_000,
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
          maxWorkers: 3,
        },
      },
      {
        test: {
          name: 'scripts',
          root: './scripts',
          include: ['**/*.test.mjs'],
          environment: 'node',
          maxWorkers: 3,
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
          maxWorkers: 3,
        },
      },
    ],
  },
});
