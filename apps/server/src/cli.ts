import { CliCommandError, CliUsageError } from './cli/args.js';
import { migrateToLatest } from './db/db.js';
import { exitOnStartupError, openRuntime } from './runtime.js';
import { startServer } from './server.js';
import { VERSION } from './version.js';

// A marketplace test still imports the usage error from here.
export { CliUsageError } from './cli/args.js';

const usage = `Toolport ${VERSION}: a gateway for MCP tool servers

Usage: toolport <command> [options]

Commands:
  start                                  migrate, then serve console, API and proxy (default)
  migrate                                apply pending database migrations and exit
  user create <username> [--password P] [--role user|admin] [--display-name N]
                                         create a user (prints a generated password when none is given)
  user reset-password <username> [--password P]
                                         set a new password and sign the user out everywhere
  import <mcpServers.json>               import the servers of a Claude Desktop / Cursor / Cherry Studio / VS Code
                                         configuration (npx and uvx packages are installed); exits 1 if any failed
  export [--include-secrets] [file]      write the installed services as an mcpServers document (stdout without
                                         a file); variable and header values are masked unless --include-secrets
  backup <file>                          write a consistent copy of the SQLite database while the server runs
                                         (PostgreSQL: prints the pg_dump command instead)
  restore <file>                         replace the SQLite database with a backup; the server must be stopped
  rotate-secret [--ignore-connections]   re-encrypt every stored secret under a new key (NEW_SECRET_KEY, or a
                                         new generated DATA_DIR/secret.key); every server must be stopped
  history rebuild [--from D] [--to D]    recompute the daily rollups from the request records (after a rolling
                                         upgrade or a bulk import); safe while servers run

Configuration comes from the environment: PORT, HOST, DATA_DIR, DATABASE_URL, REDIS_URL, SECRET_KEY,
ADMIN_PASSWORD, LOG_LEVEL, SHUTDOWN_GRACE_MS (see the README and docs/operations.md).
`;

type Command = (args: string[]) => Promise<void>;

const commands: Record<string, Command> = {
  start: async () => startServer(await openRuntime()),
  migrate: async () => {
    const rt = await openRuntime();
    const applied = await migrateToLatest(rt.database.db);
    process.stdout.write(applied.length ? `Applied: ${applied.join(', ')}\n` : 'Database is up to date\n');
    await rt.database.db.destroy();
  },
  user: async (args) => {
    const { runUserCommand } = await import('./modules/users/cli.js');
    await runUserCommand(args);
  },
  import: async (args) => {
    const { runImportCommand } = await import('./modules/market/batch/cli.js');
    const summary = await runImportCommand(args);
    if (summary.failed > 0) process.exitCode = 1;
  },
  export: async (args) => {
    const { runExportCommand } = await import('./modules/market/export/cli.js');
    await runExportCommand(args);
  },
  backup: async (args) => {
    const { runBackupCommand } = await import('./backup/cli.js');
    await runBackupCommand(args);
  },
  restore: async (args) => {
    const { runRestoreCommand } = await import('./backup/cli.js');
    await runRestoreCommand(args);
  },
  history: async (args) => {
    const { runHistoryCommand } = await import('./modules/history/cli.js');
    await runHistoryCommand(args);
  },
  'rotate-secret': async (args) => {
    const { runRotateSecretCommand } = await import('./secrets-rotation/cli.js');
    await runRotateSecretCommand(args);
  },
};

export async function runCli(argv: string[]): Promise<void> {
  const [name = 'start', ...rest] = argv;
  if (name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(usage);
    return;
  }
  if (name === '--version' || name === '-v') {
    process.stdout.write(`${VERSION}\n`);
    return;
  }
  const command = commands[name];
  if (!command) {
    process.stderr.write(`toolport: unknown command "${name}"\n\n${usage}`);
    process.exit(2);
  }
  try {
    await command(rest);
  } catch (err) {
    if (err instanceof CliUsageError) {
      process.stderr.write(`toolport: ${err.message}\n\n${usage}`);
      process.exit(2);
    }
    if (err instanceof CliCommandError) {
      process.stderr.write(`toolport: ${err.message}\n`);
      process.exit(1);
    }
    exitOnStartupError(err);
  }
}
