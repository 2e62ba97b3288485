import { type FakeRegistries, type FakeRegistriesOptions, startFakeRegistries } from '../../apps/server/test/fake-registries';
import { ADMIN_PASSWORD } from './constants';
import { test as base } from './fixtures';
import { startServer } from './server';

/**
 * A server of the marketplace specs' own, pointed at the local fake registries (npm, PyPI, the MCP
 * Registry, GitHub) instead of the public ones: searches, details and installs never leave the machine.
 * The fake npm registry serves acme-echo-mcp as a real tarball, so an install runs npm for real.
 */
export interface MarketServer {
  url: string;
  fake: FakeRegistries;
}

/**
 * `test` of the marketplace specs: the worker starts the fake registries and its own server before its first
 * test (Playwright sets up a worker fixture like a beforeAll, and before any test's baseURL is needed) and
 * stops both after its last; every page, request and sign-in goes to that server.
 */
export const test = base.extend<object, { marketServer: MarketServer; fakeRegistryOptions: FakeRegistriesOptions }>({
  /** What a spec adds to the fake (`test.use({ fakeRegistryOptions: … })`); a worker of its own then serves it. */
  fakeRegistryOptions: [{}, { scope: 'worker', option: true }],
  marketServer: [
    async ({ fakeRegistryOptions }, use) => {
      const fake = await startFakeRegistries(fakeRegistryOptions);
      try {
        const server = await startServer(ADMIN_PASSWORD, fake.env);
        try {
          await use({ url: server.url, fake });
        } finally {
          await server.stop();
        }
      } finally {
        await fake.close();
      }
    },
    { scope: 'worker' },
  ],
  baseURL: async ({ marketServer }, use) => use(marketServer.url),
});

export { expect } from './fixtures';
