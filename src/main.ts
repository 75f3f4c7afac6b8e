#!/usr/bin/env node
import { spawnSync } from 'node:child_process';
import { parseArgs } from 'node:util';
import { AppError } from './platform/http/errors.js';
import { ConfigError, loadConfig, loadDotEnv, type Config } from './config.js';
import { DataDirInUseError } from './platform/db/data-dir-lock.js';
import { BackupError, runJobOnServer, serveBackups, type JobRunAnswer } from './platform/db/backup.js';
import { jobRunAnswer } from './platform/scheduler.js';
import { SecretKeyMismatchError } from './platform/secret-box.js';
import { embeddedDataDirExists, type Database } from './platform/db/database.js';
import type { Services } from './services.js';
import { VERSION } from './version.js';
import { embeddedDataDir, openConfiguredKeyValueStore, openMigratedDatabase } from './server.js';

const USAGE = `Usage: waygate <command>

Commands:
  serve                      apply pending migrations, then serve HTTP (what npm start runs)
  migrate                    apply pending migrations and exit
  admin create --email E --username U --password P
                             create a super admin (or make the user with that email one); prints the user id
  system-key create [--name N]
                             create a system API key and print its value once
  jobs list                  the scheduled jobs with their last run (embedded: with no server running)
  jobs run NAME              run a scheduled job now, in the running server when one owns DATA_DIR (once
                             across nodes: refused while it runs anywhere)
  oauth rotate-signing-key   add a new OAuth signing key (published now, signing in 10 minutes)
  backup FILE                write a consistent snapshot of the embedded database to FILE (a new file), through
                             the running server when one owns DATA_DIR, which keeps serving meanwhile
  restore FILE               restore a backup into DATA_DIR, which must be empty or missing; the file is checked first
  secrets reset [--yes]      after the key of secrets at rest (DATA_DIR/secret.key or SECRET_KEY) is lost: forget
                             what it sealed (2FA enrolments, OAuth signing keys, integration tokens) and seal with
                             a new key, so the server starts again; asks for RESET on a terminal, else needs --yes
  --version                  print the version and exit

Configuration is read from the environment and ./.env; see docs/configuration.md.`;

/** A repeat of the signal being handled within this long is the same signal delivered twice (see serve). */
const REPEATED_SIGNAL_MS = 500;

type Command = (config: Config, args: string[]) => Promise<void>;

// The app is most of the code: imported while the database opens, and not at all for --version or help
// (which took 2.4 s when it was).
const loadApp = () => import('./app.js');

const commands: Record<string, Command> = {
  serve,
  admin: async (config, args) => {
    const { values, positionals } = parseArgs({
      args,
      allowPositionals: true,
      options: { email: { type: 'string' }, username: { type: 'string' }, password: { type: 'string' } },
    });
    if (positionals[0] !== 'create')
      throw new UsageError('Usage: waygate admin create --email E --username U --password P');
    const { email, username, password } = values;
    if (!email || !username || !password) throw new UsageError('admin create needs --email, --username and --password');
    const userId = await withServices(
      config,
      async (services) => (await services.signIn.ensureSuperAdmin({ email, username, password })).userId,
    );
    console.log(userId);
  },
  'system-key': async (config, args) => {
    const { values, positionals } = parseArgs({ args, allowPositionals: true, options: { name: { type: 'string' } } });
    if (positionals[0] !== 'create') throw new UsageError('Usage: waygate system-key create [--name N]');
    const { key } = await withServices(config, (services) =>
      services.apiKeys.createSystemKey(values.name ?? 'System key'),
    );
    console.log(key);
  },
  jobs: async (config, args) => {
    const { positionals } = parseArgs({ args, allowPositionals: true, options: {} });
    const [action, name] = positionals;
    if (action === 'list' && positionals.length === 1) {
      for (const job of await withServices(config, (services) => services.scheduler.list())) {
        const last = job.last_finished_at
          ? `last ${job.last_outcome} at ${job.last_finished_at.toISOString()} in ${job.last_duration_ms} ms`
          : 'never run';
        console.log(`${job.name}\tevery ${job.interval_seconds} s\t${last}\tnext ${job.next_run_at.toISOString()}`);
      }
      return;
    }
    if (action !== 'run' || !name || positionals.length !== 2)
      throw new UsageError('Usage: waygate jobs list | waygate jobs run NAME');
    const answer = await runJob(config, name);
    if (answer.outcome === 'unknown')
      throw new UsageError(`No scheduled job is named "${name}"; "waygate jobs list" lists them`);
    if (answer.outcome === 'running')
      throw new UsageError(`${name} is running now (on this node or another); try again when it has finished`);
    const { job } = answer;
    if (job.last_outcome === 'failed') {
      progress(`${name} failed in ${job.last_duration_ms} ms: ${job.last_error}`);
      process.exitCode = 1;
      return;
    }
    progress(`${name} succeeded in ${job.last_duration_ms} ms`);
    console.log(JSON.stringify(job.last_result));
  },
  oauth: async (config, args) => {
    if (args[0] !== 'rotate-signing-key') throw new UsageError('Usage: waygate oauth rotate-signing-key');
    const rotated = await withServices(config, (services) => services.oauth.rotateSigningKey());
    console.log(`New signing key ${rotated.kid}: published now, signing from ${rotated.signs_from.toISOString()}`);
  },
  backup: async (config, args) => {
    const file = fileArgument(args, 'backup');
    const { backUpDataDir } = await import('./backup-cli.js');
    await backUpDataDir(config, file, progress);
  },
  restore: async (config, args) => {
    const file = fileArgument(args, 'restore');
    if (config.databaseUrl)
      throw new UsageError(
        'restore is for the embedded database; for PostgreSQL use pg_restore (see docs/production.md)',
      );
    const { restoreBackup } = await import('./platform/db/backup.js');
    await restoreBackup(file, { root: config.dataDir, dataDir: embeddedDataDir(config) }, progress);
    progress(`restored into ${embeddedDataDir(config)}; start the server with this DATA_DIR`);
  },
  secrets: async (config, args) => {
    const { values, positionals } = parseArgs({ args, allowPositionals: true, options: { yes: { type: 'boolean' } } });
    if (positionals.length !== 1 || positionals[0] !== 'reset')
      throw new UsageError('Usage: waygate secrets reset [--yes]');
    const { confirmedOnTerminal, resetReport, resetSecrets, RESET_WARNING } = await import('./secrets-cli.js');
    if (!values.yes) {
      const confirmed = await confirmedOnTerminal();
      if (confirmed === undefined)
        throw new UsageError(`${RESET_WARNING} Nothing was changed: run it on a terminal to confirm, or pass --yes`);
      if (!confirmed) throw new UsageError('Nothing was changed (the answer was not RESET)');
    }
    const reset = await withServices(config, (services, database) => resetSecrets(config, services, database.db), {
      checkKey: false,
    });
    for (const line of resetReport(reset)) console.log(line);
  },
  migrate: async (config) => {
    const { database, applied } = await openMigratedDatabase(config);
    await database.close();
    console.log(applied.length ? `Applied migrations: ${applied.join(', ')}` : 'Database is up to date');
  },
};

function fileArgument(args: string[], command: string): string {
  const { positionals } = parseArgs({ args, allowPositionals: true, options: {} });
  if (positionals.length !== 1) throw new UsageError(`Usage: waygate ${command} FILE`);
  return positionals[0]!;
}

/**
 * Runs a scheduled job now: in the server that owns the embedded data directory when one runs (through its
 * socket), else here (on PostgreSQL beside any running servers: the job's row makes it run once across them).
 */
async function runJob(config: Config, name: string): Promise<JobRunAnswer> {
  if (!config.databaseUrl) {
    const viaServer = await runJobOnServer(embeddedDataDir(config), name);
    if (viaServer) return viaServer;
  }
  return withServices(config, async (services) => jobRunAnswer(await services.scheduler.runNow(name)));
}

/** Progress of long CLI commands, on stderr so stdout stays for results. */
const progress = (message: string) => console.error(`waygate: ${message}`);

/**
 * Runs a CLI task against the configured (migrated) database with the app's services; `checkKey: false` skips
 * the check of the key of secrets at rest (for the command that replaces a lost one).
 */
async function withServices<T>(
  config: Config,
  task: (services: Services, database: Database) => Promise<T>,
  { checkKey = true } = {},
): Promise<T> {
  if (!config.databaseUrl && !embeddedDataDirExists(embeddedDataDir(config))) initialiseEmbeddedDatabase();
  const loading = loadApp();
  const { database } = await openMigratedDatabase(config, { checkKey });
  const kv = await openConfiguredKeyValueStore(config);
  try {
    const { buildApp } = await loading;
    const app = await buildApp(config, { database, kv }, { logger: false, scheduledJobs: false });
    try {
      return await task(app.services, database);
    } finally {
      await app.close();
    }
  } finally {
    await kv.close();
    await database.close();
  }
}

async function serve(config: Config): Promise<void> {
  if (!config.databaseUrl && !embeddedDataDirExists(embeddedDataDir(config))) initialiseEmbeddedDatabase();
  const loading = loadApp();
  const { database, applied } = await openMigratedDatabase(config);
  const kv = await openConfiguredKeyValueStore(config);
  const { buildApp } = await loading;
  const app = await buildApp(config, { database, kv });
  if (applied.length) app.log.info({ applied }, 'applied database migrations');

  let stopping: { signal: string; atMs: number } | undefined;
  let stopBackups: (() => Promise<void>) | undefined;
  const stop = async (signal: string) => {
    if (stopping) {
      // A signal to the process group of `npm start` (Ctrl-C, `kill -- -PGID`, systemd's KillMode=control-group)
      // reaches node twice within milliseconds: directly and forwarded by npm. Only a later one means "now".
      if (signal === stopping.signal && performance.now() - stopping.atMs < REPEATED_SIGNAL_MS) return;
      app.log.warn({ signal }, 'second signal: exiting at once');
      process.exit(1);
    }
    stopping = { signal, atMs: performance.now() };
    app.log.info({ signal }, 'shutting down: finishing in-flight requests');
    // Node's server.close() also drops idle keep-alive connections, and a client that sends on one at that
    // moment sees a reset. Instead each connection is left to carry one more request, answered 503 with
    // `Connection: close` (return503OnClosing), or to close on its own; what is left after the grace
    // period (idle or still running) is cut off, so shutdown always completes. That includes WebSockets:
    // they were sent 1001, and one whose client never answers the close frame (a phone without network)
    // would otherwise hold the close for ws's own 30 s timeout; upgraded sockets are not among the
    // connections closeAllConnections knows.
    const closeIdle = app.server.closeIdleConnections.bind(app.server);
    app.server.closeIdleConnections = () => undefined;
    const deadline = setTimeout(() => {
      closeIdle();
      app.server.closeAllConnections();
      for (const client of app.websocketServer.clients) client.terminate();
    }, config.shutdownTimeoutSecs * 1000).unref();
    try {
      await app.close();
    } finally {
      clearTimeout(deadline);
      await stopBackups?.();
      await kv.close();
      await database.close();
    }
    app.log.info('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));

  const address = await app.listen({ port: config.port, host: config.host });
  // `waygate backup` asks this server for a snapshot while it owns the embedded data directory;
  // `waygate jobs run` asks it to run a job, for the same reason.
  const runJobHere = async (name: string) => jobRunAnswer(await app.services.scheduler.runNow(name));
  stopBackups =
    database.kind === 'embedded' ? serveBackups(database, embeddedDataDir(config), app.log, runJobHere) : undefined;
  app.log.info({ address, database: database.kind, kv: kv.kind }, `Waygate listening on ${address}`);
}

/**
 * Creating a PGlite data directory (initdb) peaks near 800 MB and leaves the
 * process that did it about 150 MB larger for good, so a first start runs it in
 * a short-lived `waygate migrate` child and the server only ever opens an
 * existing directory.
 */
function initialiseEmbeddedDatabase(): void {
  console.error('waygate: creating the embedded database (first start; takes a few seconds)');
  const child = spawnSync(process.execPath, [process.argv[1]!, 'migrate'], { stdio: ['ignore', 'ignore', 'inherit'] });
  if (child.status !== 0) throw new Error('creating the embedded database failed');
}

async function main(argv: string[]): Promise<void> {
  const [name = 'serve', ...rest] = argv;
  if (name === 'help' || name === '--help' || name === '-h') {
    console.log(USAGE);
    return;
  }
  if (name === '--version' || name === '-v' || name === 'version') {
    console.log(VERSION);
    return;
  }
  const command = commands[name];
  if (!command) throw new UsageError(`Unknown command "${name}". Run "waygate help" for the list.`);
  loadDotEnv();
  // Everything this process writes under DATA_DIR (database files, keys, mail outbox) is its owner's alone.
  process.umask(0o077);
  await command(loadConfig(), rest);
}

class UsageError extends Error {}

main(process.argv.slice(2)).catch((error: unknown) => {
  const known =
    error instanceof ConfigError ||
    error instanceof UsageError ||
    error instanceof AppError ||
    error instanceof DataDirInUseError ||
    error instanceof BackupError ||
    error instanceof SecretKeyMismatchError ||
    (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS');
  const message = error instanceof Error ? error.message : String(error);
  console.error(`waygate: ${known ? message : `failed: ${message}`}`);
  process.exit(known ? 2 : 1);
});
