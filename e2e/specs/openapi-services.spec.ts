import type { Locator, Page } from '@playwright/test';
import { type PetsRest, petsYaml, startPetsRest } from '../../apps/server/test/gateway/fixtures/pets-rest';
import { axeViolations } from '../support/axe';
import { expect, test } from '../support/fixtures';
import { expectDialogFits } from '../support/phone-fit';
import { accessToken, uninstallNamed } from '../support/services-api';
import { toast } from '../support/toasts';
import { expectChineseOnly } from '../support/zh-text-check';

/**
 * OpenAPI services in the console (issue 30, docs/openapi.md "In the console"): a REST API on loopback described
 * by a real OpenAPI document (the pets API of the server's own OpenAPI service tests), added through Custom
 * Install with a preview, its tools listed and called with Try it, its base URL edited, and documents the server
 * refuses shown in the dialog, in English and in Chinese.
 */

const NAME = 'e2e-openapi-pets';
const ZH_NAME = 'e2e-openapi-zh';
const BROKEN = '{"openapi": "3.0.0", ';
const TOOLS = ['createPet', 'get_boom', 'get_pet_by_id', 'hello', 'listPets'];

let rest: PetsRest;
/** Where the edited service's requests go after its base URL is changed. */
let moved: PetsRest;

test.beforeAll(async () => {
  rest = await startPetsRest(petsYaml);
  moved = await startPetsRest(petsYaml);
});

test.afterAll(async ({ playwright, baseURL }) => {
  const request = await playwright.request.newContext({ baseURL });
  await uninstallNamed(request, await accessToken(request), [NAME, ZH_NAME]);
  await request.dispose();
  await rest?.close();
  await moved?.close();
});

/** Opens Custom Install with the OpenAPI type chosen. */
async function openCustomOpenApi(page: Page, labels: { add: string; custom: string; type: string }): Promise<Locator> {
  await page.getByRole('button', { name: labels.add }).click();
  await page.getByRole('menuitem', { name: labels.custom }).click();
  const dialog = page.getByRole('dialog', { name: labels.custom });
  await dialog.getByLabel(labels.type).selectOption('openapi');
  return dialog;
}

const fileOf = (name: string, text: string) => ({
  name,
  mimeType: name.endsWith('.json') ? 'application/json' : 'application/yaml',
  buffer: Buffer.from(text),
});

/** Every `pets` request the REST server got for this path since `from`. */
const hitsOf = (server: PetsRest, path: string, from = 0) => server.hits.slice(from).filter((h) => h.url === path);

test.describe('OpenAPI services in the console', () => {
  test.setTimeout(120_000);

  test('adds a REST API from its document with a preview, calls a tool, edits its base URL; a bad document is refused in the dialog', async ({
    page,
    request,
    signedIn,
  }) => {
    await page.goto('/services');
    await expect(page.getByRole('heading', { name: 'Services', level: 1 })).toBeVisible();
    const dialog = await openCustomOpenApi(page, { add: 'Add Service', custom: 'Custom Install', type: 'Type' });

    await test.step('a document that does not parse: refused in the dialog, by the preview and by Install, the form kept', async () => {
      await dialog.getByLabel('Name').fill(NAME);
      await dialog.getByRole('radio', { name: 'Upload a file' }).click();
      await dialog.getByLabel('Document file').setInputFiles(fileOf('broken.json', BROKEN));
      await expect(dialog.getByText('Chosen: broken.json (1 KB)')).toBeVisible();
      await dialog.getByRole('button', { name: 'Preview tools' }).click();
      // Said beside the document as any refusal of the dialog (decision 0058): the file marked, described and focused.
      const refusal = dialog.getByRole('alert').filter({ hasText: 'The OpenAPI document was refused' });
      await expect(refusal).toContainText('The OpenAPI document is neither valid JSON nor valid YAML');
      const file = dialog.getByLabel('Document file');
      await expect(file).toHaveAttribute('aria-invalid', 'true');
      await expect(file).toHaveAccessibleDescription(/The OpenAPI document was refused: The OpenAPI document is neither valid JSON/);
      await expect(file).toBeFocused();
      await dialog.getByRole('button', { name: 'Install' }).click();
      await expect(refusal).toContainText('neither valid JSON nor valid YAML');
      await expect(file).toBeFocused();
      await expect(dialog).toBeVisible();
      await expect(dialog.getByLabel('Name')).toHaveValue(NAME);
    });

    await test.step('the document by URL, an API key in a header, and a preview of its five tools', async () => {
      await dialog.getByRole('radio', { name: 'From a URL' }).click();
      await dialog.getByLabel('Document URL').fill(`${rest.origin}/openapi.yaml`);
      await dialog.getByLabel('Authentication').selectOption('header');
      await dialog.getByLabel('Header name').fill('X-API-Key');
      await expect(dialog.getByLabel('Value')).toHaveAttribute('type', 'password');
      await dialog.getByLabel('Value').fill('secret-key');
      const fetched = hitsOf(rest, '/openapi.yaml').length;
      await dialog.getByRole('button', { name: 'Preview tools' }).click();
      await expect(dialog.getByRole('status').filter({ hasText: 'The document makes' })).toHaveText(
        `The document makes 5 tools, requests going to ${rest.origin}/api.`,
      );
      const preview = dialog.getByTestId('openapi-preview');
      await expect(preview.getByRole('listitem')).toHaveCount(5);
      await expect(preview).toContainText('GET /pets/{petId}');
      await expect(preview).toContainText('List pets');
      await expect(dialog.getByText('The OpenAPI document was refused')).toBeHidden();
      expect(hitsOf(rest, '/openapi.yaml').length).toBe(fetched + 1);
      // Nothing was created by the preview.
      const installed = await request.get('/api/mcp_market/installed', { headers: { Authorization: `Bearer ${signedIn.token}` } });
      expect(((await installed.json()).data as { name: string }[]).some((s) => s.name === NAME)).toBe(false);
    });

    const card = page.getByRole('group', { name: NAME });

    await test.step('Install creates it, healthy', async () => {
      await dialog.getByRole('button', { name: 'Install' }).click();
      await expect(toast(page, 'Service Created')).toBeVisible({ timeout: 30_000 });
      await expect(dialog).toBeHidden();
      await expect(card).toBeVisible();
      await expect(card.locator('[data-health]').first()).toHaveAttribute('data-health', 'healthy');
    });

    await test.step('its tools in the Tools dialog; Try it calls the REST API with the key', async () => {
      await card.getByRole('button', { name: `Tools of ${NAME}` }).click();
      const tools = page.getByRole('dialog', { name: `Tools of ${NAME}` });
      for (const name of TOOLS) await expect(tools.getByTestId('tool-row').filter({ hasText: name }).first()).toBeVisible();
      const row = tools.getByTestId('tool-row').filter({ has: page.getByText('get_pet_by_id', { exact: true }) });
      await row.getByText('Try it').click();
      await row.getByLabel('petId *').fill('1');
      const before = rest.hits.length;
      await row.getByRole('button', { name: 'Run' }).click();
      await expect(row.getByTestId('try-result')).toContainText('"name":"Rex"');
      await expect(row.getByTestId('try-result')).toContainText(/Answered in [\d.]+ ms/);
      const hit = hitsOf(rest, '/api/pets/1', before)[0];
      expect(hit?.headers['x-api-key']).toBe('secret-key');
      await page.keyboard.press('Escape');
    });

    await test.step('Configure shows its OpenAPI URL and an Open WebUI connection, as for any service', async () => {
      await card.getByRole('button', { name: 'Configure' }).click();
      const config = page.getByRole('dialog', { name: NAME });
      await expect(config.getByLabel('OpenAPI URL', { exact: true })).toHaveValue(new RegExp(`/openapi/proxy/${NAME}$`));
      await expect(config.getByTestId('snippet-openwebui')).toContainText(`/openapi/proxy/${NAME}`);
      await page.keyboard.press('Escape');
    });

    await test.step('Edit shows the settings, the key masked; a new base URL sends the next call elsewhere', async () => {
      await card.getByRole('button', { name: `Edit ${NAME}` }).click();
      const edit = page.getByRole('dialog', { name: 'Edit Service' });
      await expect(edit.getByLabel('Type')).toHaveValue('openapi');
      await expect(edit.getByLabel('Document URL')).toHaveValue(`${rest.origin}/openapi.yaml`);
      await expect(edit.getByLabel('Base URL (optional)')).toHaveValue('');
      await expect(edit.getByLabel('Header name')).toHaveValue('X-API-Key');
      await expect(edit.getByLabel('Value')).toHaveValue('********');
      await edit.getByLabel('Base URL (optional)').fill(`${moved.origin}/api`);
      await edit.getByRole('button', { name: 'Save' }).click();
      await expect(toast(page, 'Update Successful')).toBeVisible({ timeout: 30_000 });
      await expect(edit).toBeHidden();

      await card.getByRole('button', { name: `Tools of ${NAME}` }).click();
      const tools = page.getByRole('dialog', { name: `Tools of ${NAME}` });
      const row = tools.getByTestId('tool-row').filter({ has: page.getByText('get_pet_by_id', { exact: true }) });
      await row.getByText('Try it').click();
      await row.getByLabel('petId *').fill('2');
      const before = moved.hits.length;
      await row.getByRole('button', { name: 'Run' }).click();
      await expect(row.getByTestId('try-result')).toContainText('"name":"Tom"');
      // The stored key went along to the new base URL; the old server got nothing.
      expect(hitsOf(moved, '/api/pets/2', before)[0]?.headers['x-api-key']).toBe('secret-key');
      expect(hitsOf(rest, '/api/pets/2')).toEqual([]);
      await page.keyboard.press('Escape');

      await card.getByRole('button', { name: `Edit ${NAME}` }).click();
      await expect(page.getByRole('dialog', { name: 'Edit Service' }).getByLabel('Base URL (optional)')).toHaveValue(`${moved.origin}/api`);
      await page.keyboard.press('Escape');
    });
  });

  test('at 390 px the OpenAPI form, its preview and a refusal fit the screen, and pass axe-core', async ({ page, signedIn }) => {
    expect(signedIn.user.role).toBeGreaterThanOrEqual(10);
    const width = 390;
    await page.setViewportSize({ width, height: 844 });
    await page.goto('/services');
    const dialog = await openCustomOpenApi(page, { add: 'Add Service', custom: 'Custom Install', type: 'Type' });
    await dialog.getByLabel('Document URL').fill(`${rest.origin}/openapi.yaml`);
    await dialog.getByLabel('Authentication').selectOption('basic');
    await dialog.getByRole('button', { name: 'Preview tools' }).click();
    await expect(dialog.getByTestId('openapi-preview').getByRole('listitem')).toHaveCount(5);
    await expectDialogFits(page, dialog, width, 'Custom Install with an OpenAPI preview');
    expect(await axeViolations(page, dialog)).toEqual([]);

    await dialog.getByRole('radio', { name: 'Upload a file' }).click();
    await dialog.getByLabel('Document file').setInputFiles(fileOf('broken.json', BROKEN));
    await dialog.getByRole('button', { name: 'Preview tools' }).click();
    await expect(dialog.getByRole('alert').filter({ hasText: 'The OpenAPI document was refused' })).toBeVisible();
    await expectDialogFits(page, dialog, width, 'Custom Install with a refused document');
    expect(await axeViolations(page, dialog)).toEqual([]);
  });

  test('in Chinese: an uploaded YAML document previewed and created, and a filter the server refuses shown in the edit dialog', async ({
    page,
    signedIn,
  }) => {
    expect(signedIn.user.role).toBeGreaterThanOrEqual(10);
    await page.addInitScript(() => localStorage.setItem('i18nextLng', 'zh-CN'));
    await page.goto('/services');
    await expect(page.getByRole('heading', { name: '服务', level: 1 })).toBeVisible();
    const dialog = await openCustomOpenApi(page, { add: '添加服务', custom: '自定义安装', type: '类型' });
    // Product and protocol names stay as they are; the tools' names, paths and the base URL are data.
    const allowed = ['OpenAPI', 'REST API', 'JSON', 'YAML', 'API', 'URL', 'Bearer', 'Basic', 'MiB', 'ID', 'KB', rest.origin];

    await dialog.getByLabel('名称').fill(ZH_NAME);
    await dialog.getByRole('radio', { name: '上传文件' }).click();
    await dialog.getByLabel('文档文件').setInputFiles(fileOf('broken.json', BROKEN));
    await dialog.getByRole('button', { name: '预览工具' }).click();
    await expect(dialog.getByRole('alert').filter({ hasText: 'OpenAPI 文档被拒绝' })).toContainText('既不是有效的 JSON');

    await dialog.getByLabel('文档文件').setInputFiles(fileOf('pets.yaml', petsYaml(rest.origin)));
    await dialog.getByLabel('认证').selectOption('bearer');
    await dialog.getByLabel('令牌').fill('tok-zh');
    await dialog.getByLabel('标签').fill('pets');
    await dialog.getByRole('button', { name: '预览工具' }).click();
    await expect(dialog.getByRole('status').filter({ hasText: '该文档生成' })).toHaveText(
      `该文档生成 3 个工具，请求发往 ${rest.origin}/api。`,
    );
    await expect(dialog.getByTestId('openapi-preview').getByRole('listitem')).toHaveCount(3);
    await expectChineseOnly(page, ['common', 'services'], allowed);

    await dialog.getByRole('button', { name: '安装' }).click();
    await expect(toast(page, '服务已创建')).toBeVisible({ timeout: 30_000 });
    const card = page.getByRole('group', { name: ZH_NAME });
    await expect(card.locator('[data-health]').first()).toHaveAttribute('data-health', 'healthy');

    await card.getByRole('button', { name: `编辑 ${ZH_NAME}` }).click();
    const edit = page.getByRole('dialog', { name: '编辑服务' });
    await expect(edit.getByRole('radio', { name: '上传文件' })).toBeChecked();
    await expect(edit.getByText('该服务使用已上传的文档 Pets 1.0.0；选择文件即可替换。')).toBeVisible();
    await expect(edit.getByLabel('令牌')).toHaveValue('********');
    await expect(edit.getByLabel('标签')).toHaveValue('pets');
    await edit.getByLabel('标签').fill('nope');
    await edit.getByRole('button', { name: '保存' }).click();
    // The filter's fault, not the document's: said beside the filter list given, marked and focused (decision 0058).
    const tags = edit.getByLabel('标签');
    await expect(tags).toHaveAccessibleDescription(/操作筛选条件没有保留文档 5 个操作中的任何一个/);
    await expect(tags).toHaveAttribute('aria-invalid', 'true');
    await expect(tags).toBeFocused();
    await expect(edit.getByLabel('文档文件')).not.toHaveAttribute('aria-invalid', 'true');
    await expect(edit).toBeVisible();
    await expect(edit.getByLabel('标签')).toHaveValue('nope');
    await expectChineseOnly(page, ['common', 'services'], allowed);
  });
});
