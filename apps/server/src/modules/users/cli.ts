import { CreateUserRequest, Role } from '@toolport/contract';
import { z } from 'zod';
import { withCore } from '../../build/core.js';
import { CliUsageError, parseCommand } from '../../cli/args.js';
import { AppError } from '../../http/errors.js';
import { translate } from '../../i18n/index.js';
import { randomToken } from '../../infra/secrets.js';
import { type CommandAction, createCommandAudit } from '../audit/index.js';
import { createRefreshTokens } from '../auth/index.js';
import { createUsersModule, type UsersService } from './index.js';

export interface UserCommandIo {
  /** The environment the configuration is read from (tests pass their own). */
  env?: NodeJS.ProcessEnv;
  print?: (line: string) => void;
}

type Sub = (
  service: UsersService,
  args: string[],
  print: (line: string) => void,
  /** The audit trail: the command line is an actor too (decision 0049). */
  record: (a: Omit<CommandAction, 'command'>) => Promise<unknown>,
) => Promise<void>;

const roles = { user: Role.User, admin: Role.Admin } as const;

/** `toolport user create|reset-password …`: the same rules as the API, run against the configured database. */
export async function runUserCommand(args: string[], io: UserCommandIo = {}): Promise<void> {
  const [name, ...rest] = args;
  const sub = name === 'create' ? createUser : name === 'reset-password' ? resetPassword : undefined;
  if (!sub) throw new CliUsageError(name ? `unknown user command "${name}"` : 'missing user command (create or reset-password)');
  const print = io.print ?? ((line: string) => process.stdout.write(`${line}\n`));

  try {
    // On the core (build/core.ts): its events reach no running server, which learns of the change within its
    // principal cache window (a few seconds).
    await withCore(io.env, async ({ db, secrets, events, config, logger, lifecycle }) => {
      const users = createUsersModule({ db, refreshTokens: createRefreshTokens(db), secrets, events, config, logger });
      lifecycle.add({ name: 'users', close: () => users.close() });
      const audit = createCommandAudit(db);
      await sub(users.service, rest, print, (a) => audit.command({ ...a, command: `toolport user ${name}` }));
    });
  } catch (err) {
    // A refused argument (name taken, unknown user) is the operator's input error, said plainly.
    if (err instanceof AppError) throw new CliUsageError(translate('en', err.key, err.params));
    throw err;
  }
}

const createUser: Sub = async (service, args, print, record) => {
  const { values, positionals } = parseCommand(args, {
    password: { type: 'string' },
    role: { type: 'string', default: 'user' },
    'display-name': { type: 'string' },
  });
  const username = onePositional(positionals, 'user create <username>');
  if (values.role !== 'user' && values.role !== 'admin') throw new CliUsageError(`--role must be user or admin, not "${values.role}"`);
  const generated = values.password === undefined ? randomToken(15) : undefined;
  const input = valid(CreateUserRequest, {
    username,
    password: values.password ?? generated,
    display_name: values['display-name'] ?? '',
    role: roles[values.role],
  });
  const user = await service.create(input);
  await record({ action: 'create', object: 'user', id: String(user.id), changes: { ...input } });
  print(`Created ${values.role} "${user.username}" (id ${user.id})`);
  if (generated) print(`Password: ${generated}`);
};

const resetPassword: Sub = async (service, args, print, record) => {
  const { values, positionals } = parseCommand(args, { password: { type: 'string' } });
  const username = onePositional(positionals, 'user reset-password <username>');
  const generated = values.password === undefined ? randomToken(15) : undefined;
  const { password } = valid(z.object({ password: CreateUserRequest.shape.password }), { password: values.password ?? generated });
  await service.resetPassword(username, password);
  await record({ action: 'reset_password', object: 'user', id: username, changes: { username, password } });
  print(`Password of "${username}" reset; every session of the user has ended`);
  if (generated) print(`Password: ${generated}`);
};

function onePositional(positionals: string[], form: string): string {
  const [first, ...extra] = positionals;
  if (!first || extra.length > 0) throw new CliUsageError(`expected: toolport ${form}`);
  return first;
}

/** The API's own validation, reported the CLI way. */
function valid<T extends z.ZodType>(schema: T, value: unknown): z.infer<T> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw new CliUsageError(`${issue?.path.join('.') || 'value'}: ${issue?.message ?? 'invalid'}`);
}
