import { type FakeEmbeddings, startFakeEmbeddings } from '../../apps/server/test/fake-embeddings';
import { ADMIN_PASSWORD, expect, test } from '../support/fixtures';
import { rootPage } from '../support/oauth-setup';
import { type RunningServer, startServer } from '../support/server';
import { toast } from '../support/toasts';

const KEY = 'sk-e2e-embeddings-key-0123456789';

/**
 * Preferences' embeddings provider of discovery search (issue 28, decision 0046), against a fake
 * OpenAI-compatible provider on loopback: saved, its key never shown again, checked on demand, and its
 * failure shown with the reason, in English and in Chinese.
 */
test.describe('the embeddings provider in Preferences', () => {
  test.describe.configure({ mode: 'serial' });

  let server: RunningServer;
  let fake: FakeEmbeddings;
  test.beforeAll(async () => {
    fake = await startFakeEmbeddings();
    server = await startServer(ADMIN_PASSWORD);
  });
  test.afterAll(async () => {
    await server?.stop();
    await fake?.close();
  });

  test('is saved, checked, and shows why it fails', async ({ browser }) => {
    const { page } = await rootPage(browser, server.url);
    await page.goto('/preferences');
    await expect(page.getByRole('heading', { name: 'Preferences', level: 1 })).toBeVisible();
    const card = page.getByRole('region', { name: 'Discovery search: embeddings' });
    // The status is its own request after the preferences: slow when several servers share the machine.
    await expect(card.getByTestId('embeddings-status')).toContainText('Not set: search ranks by words', { timeout: 15_000 });
    await expect(card.getByRole('button', { name: 'Check now' })).toBeDisabled();

    await card.getByLabel('Endpoint URL').fill(fake.url);
    await card.getByLabel('Model').fill('text-embedding-3-small');
    await card.getByLabel('Dimensions').fill('64');
    await card.getByLabel('API key').fill(KEY);
    await card.getByRole('button', { name: 'Save provider' }).click();
    // Four preferences, saved one after the other: on a loaded machine this takes a few seconds.
    await expect(toast(page, 'Embeddings provider saved')).toBeVisible({ timeout: 20_000 });
    await expect(card.getByTestId('embeddings-status')).toContainText('Set, not used yet');

    await card.getByRole('button', { name: 'Check now' }).click();
    await expect(card.getByTestId('embeddings-status')).toContainText('Answering: search is hybrid');
    await expect(card.getByTestId('embeddings-status')).toContainText('0 tool vectors stored');
    expect(fake.requests.at(-1)).toMatchObject({ model: 'text-embedding-3-small', dimensions: 64, authorization: `Bearer ${KEY}` });

    fake.mode.status = 503;
    await card.getByRole('button', { name: 'Check now' }).click();
    const status = card.getByTestId('embeddings-status');
    await expect(status).toContainText('Failing: search ranks by words');
    await expect(status.getByRole('alert')).toContainText('The provider refused the request.');
    await expect(status.getByRole('alert')).toContainText('HTTP 503');

    // After a reload: the fields as saved, the key as the server's mask only.
    await page.reload();
    await expect(card.getByLabel('Endpoint URL')).toHaveValue(fake.url);
    await expect(card.getByLabel('API key')).toHaveValue('');
    await expect(card.getByLabel('API key')).toHaveAttribute('placeholder', '********');
    expect(await page.content()).not.toContain(KEY);

    await page.getByRole('combobox', { name: 'Language' }).selectOption({ label: '中文' });
    const zh = page.getByRole('region', { name: '发现搜索：向量嵌入' });
    await expect(zh.getByTestId('embeddings-status')).toContainText('出现故障：按关键词搜索');
    await expect(zh.getByRole('alert')).toContainText('接口拒绝了请求。');
    fake.mode.status = 200;
    await zh.getByRole('button', { name: '立即检查' }).click();
    await expect(zh.getByTestId('embeddings-status')).toContainText('正常应答：混合排序');
  });
});
