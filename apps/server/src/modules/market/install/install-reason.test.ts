import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, engines, type TestApp } from '../../../../test/harness.js';
import { type InstallKit, startInstallKit, waitForTask } from '../../../../test/kits/install.js';
import { serviceRow } from '../../../../test/kits/services.js';
import { translate as translateIn } from '../../../i18n/index.js';
import { LocalisedError, readStoredText, storedText } from '../../../i18n/localised-error.js';
import { CommandFailedError } from '../installers/run-command.js';
import { ReplicaInstallError } from './replica.js';

/** A package whose executable complains on stderr and exits 3 before it says a word of MCP. */
const crashing = {
  name: 'acme-crashing-mcp',
  version: '1.0.0',
  bin: { 'acme-crashing-mcp': 'server.mjs' },
  files: { 'server.mjs': '#!/usr/bin/env node\nconsole.error("acme-crashing-mcp: ACME_TOKEN is not set");\nprocess.exit(3);\n' },
};
/** A package whose install script fails: npm itself exits non-zero, after printing the script's output. */
const brokenInstall = {
  name: 'acme-script-fails',
  version: '1.0.0',
  bin: { 'acme-script-fails': 'server.mjs' },
  files: { 'server.mjs': '#!/usr/bin/env node\n' },
  scripts: { install: 'node -e "console.error(\'acme-script-fails: the build broke\'); process.exit(7)"' },
};

const HANDSHAKE = { en: 'The server did not complete the MCP handshake: ', 'zh-CN': '该服务未能完成 MCP 握手：' };

/**
 * A failed install's reason is stored as words of ours plus the tools' own output: the services API says
 * our part in the reader's language (Accept-Language) and quotes the rest as it was, in every language.
 */
describe.each(engines)('install failure reasons in the reader’s language on %s', (engine) => {
  let kit: InstallKit;
  let t: TestApp;
  let token: string;

  beforeAll(async () => {
    kit = await startInstallKit(engine, { npm: [crashing, brokenInstall] });
    ({ t, token } = kit);
  });
  afterAll(async () => kit?.close());

  /** A custom `npx` service, installed pinned; resolves once its install task has finished. */
  const failedInstall = async (name: string, command: string) => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/mcp_market/custom_service',
      headers: bearer(token),
      payload: { name, type: 'stdio', command },
    });
    expect(res.statusCode, res.body).toBe(201);
    const { task_id: taskId, service_id: id } = res.json().data as { task_id: string; service_id: number };
    const status = await waitForTask(t, token, taskId);
    expect(status.status, status.logs.join('\n')).toBe('failed');
    return { id, taskId, status };
  };
  /** The service as `GET /mcp_market/installed` shows it in a language. */
  const listed = async (id: number, lang: string) => {
    const res = await t.app.inject({
      method: 'GET',
      url: '/api/mcp_market/installed',
      headers: { ...bearer(token), 'accept-language': lang },
    });
    expect(res.statusCode, res.body).toBe(200);
    return (res.json().data as { id: number; health_status: string; health_details: string; enabled: boolean }[]).find((s) => s.id === id);
  };
  const taskError = async (taskId: string, lang: string) =>
    (
      await t.app.inject({
        method: 'GET',
        url: `/api/mcp_market/install_status/${taskId}`,
        headers: { ...bearer(token), 'accept-language': lang },
      })
    ).json().data.error_message as string;

  it('a package the registry does not know (404): our sentence in Chinese or English, the package name as it is', async () => {
    const { id, taskId } = await failedInstall('ghost-reason', 'npx -y acme-no-such-package');
    expect(kit.npm.requests).toContain('/acme-no-such-package');
    expect(await listed(id, 'zh-CN')).toMatchObject({
      enabled: false,
      health_status: 'install_failed',
      health_details: '软件包在仓库中不存在：acme-no-such-package',
    });
    expect((await listed(id, 'en'))?.health_details).toBe('package not found on the registry: acme-no-such-package');
    expect((await listed(id, 'zh-TW,zh;q=0.9,en;q=0.5'))?.health_details).toBe('软件包在仓库中不存在：acme-no-such-package');
    // The install dialog's toast and the card say the same.
    expect(await taskError(taskId, 'zh-CN')).toBe('软件包在仓库中不存在：acme-no-such-package');
  }, 240_000);

  it('an executable that exits non-zero: our sentence is translated, the gateway’s diagnostic after it is quoted unchanged', async () => {
    const { id, taskId, status } = await failedInstall('crashing-reason', 'npx -y acme-crashing-mcp');
    const en = (await listed(id, 'en'))?.health_details ?? '';
    const zh = (await listed(id, 'zh-CN'))?.health_details ?? '';
    expect(en.startsWith(HANDSHAKE.en), en).toBe(true);
    expect(zh.startsWith(HANDSHAKE['zh-CN']), zh).toBe(true);
    const quoted = en.slice(HANDSHAKE.en.length);
    // The gateway's diagnostic ends with what the executable said on stderr before it exited.
    expect(quoted).toMatch(/exited with code 3: acme-crashing-mcp: ACME_TOKEN is not set$/);
    expect(zh.slice(HANDSHAKE['zh-CN'].length)).toBe(quoted);
    expect(await taskError(taskId, 'zh-CN')).toBe(zh);
    // The log keeps the English for operators; its lines are never translated.
    expect(status.logs).toContain(`Installation failed: ${en}`);
  }, 240_000);

  it('npm exiting non-zero: "npm exited with code N" in the reader’s words, npm’s own output left in the log as it printed it', async () => {
    const { id, taskId } = await failedInstall('script-reason', 'npx -y acme-script-fails');
    const en = (await listed(id, 'en'))?.health_details ?? '';
    const code = /^npm exited with code (\d+)$/.exec(en)?.[1];
    expect(code, en).toBeDefined();
    expect((await listed(id, 'zh-CN'))?.health_details).toBe(`npm 以退出码 ${code} 退出`);
    const zhStatus = await t.app.inject({
      method: 'GET',
      url: `/api/mcp_market/install_status/${taskId}`,
      headers: { ...bearer(token), 'accept-language': 'zh-CN' },
    });
    const data = zhStatus.json().data as { error_message: string; logs: string[] };
    expect(data.error_message).toBe(`npm 以退出码 ${code} 退出`);
    expect(data.logs.some((l) => l.includes('acme-script-fails: the build broke'))).toBe(true);
  }, 240_000);

  it('an older row with English text is shown as it is; export carries no stored-message shape', async () => {
    const row = await t.ctx.db
      .insertInto('services')
      .values(
        serviceRow({
          name: 'older-reason',
          enabled: 0,
          health_status: 'install_failed',
          health_details: 'package not found on the registry: acme-old',
        }),
      )
      .returning('id')
      .executeTakeFirstOrThrow();
    expect((await listed(row.id, 'zh-CN'))?.health_details).toBe('package not found on the registry: acme-old');

    const exported = await t.app.inject({
      method: 'GET',
      url: '/api/mcp_market/export',
      headers: { ...bearer(token), 'accept-language': 'zh-CN' },
    });
    expect(exported.statusCode, exported.body).toBe(200);
    expect(Object.keys(exported.json().data.mcpServers)).toEqual(expect.arrayContaining(['ghost-reason', 'crashing-reason']));
    expect(exported.body).not.toMatch(/"key"|market\.install_|install\.handshake|"en":/);
  });
});

describe('stored messages', () => {
  const zh = (text: string) => readStoredText(text, (key, params) => translateIn('zh-CN', key, params));

  it('a replica’s install error says the cause in the client’s language, with the tool’s output quoted', () => {
    const cause = new CommandFailedError('install.command_exit', { command: 'npm', code: 1 });
    const err = new ReplicaInstallError('market.replica_install_failed', { name: 'notes' }, cause);
    expect(err.message).toBe(
      'Service notes could not be installed on this gateway replica (its service log has the details): npm exited with code 1',
    );
    expect(err.localised('zh-CN')).toBe('服务 notes 无法在此网关副本上安装（详见该服务的日志）：npm 以退出码 1 退出');
    const spawnFailed = new CommandFailedError('install.command_not_started', { command: 'uv' }, 'spawn uv ENOENT');
    expect(spawnFailed.localised('zh-CN')).toBe('无法启动 uv：spawn uv ENOENT');
  });

  it('reads back what it stored, keeps anything else as it is, and falls back to the English of an unknown key', () => {
    const stored = storedText(new LocalisedError('install.handshake_failed', {}, 'could not start: tool server exited with code 3').data());
    expect(zh(stored)).toBe('该服务未能完成 MCP 握手：could not start: tool server exited with code 3');
    expect(stored).toContain('The server did not complete the MCP handshake: could not start: tool server exited with code 3');
    // A tool server's diagnostic that happens to be JSON is data, not a message of ours.
    expect(zh('{"error":"boom"}')).toBe('{"error":"boom"}');
    expect(zh('{"key":"no.such_key","params":{},"en":"Words of a later version"}')).toBe('Words of a later version');
    expect(zh('exited with code 1')).toBe('exited with code 1');
  });
});
