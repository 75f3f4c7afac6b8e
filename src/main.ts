#!/usr/bin/env node
import { spawnSync } from 'node:child_process';
import { parseArgs } from 'node:util';
import { buildApp } from './app.js';
import { ConfigError, loadConfig, loadDotEnv, type Config } from './config.js';
import { embeddedDataDirExists } from './platform/db/database.js';
import { embeddedDataDir, openConfiguredKeyValueStore, openMigratedDatabase } from './server.js';

const USAGE = `Usage: waygate <command>

Commands:
  serve      apply pending migrations, then serve HTTP (what npm start runs)
  migrate    apply pending migrations and exit

Configuration is read from the environment and ./.env; see the README.`;

type Command = (config: Config, args: string[]) => Promise<void>;

const commands: Record<string, Command> = {
  serve,
  migrate: async (config) => {
    const { database, applied } = await openMigratedDatabase(config);
    await database.close();
    console.log(applied.length ? `Applied migrations: ${applied.join(', ')}` : 'Database is up to date');
  },
};

async function serve(config: Config): Promise<void> {
  if (!config.databaseUrl && !embeddedDataDirExists(embeddedDataDir(config))) initialiseEmbeddedDatabase();
  const { database, applied } = await openMigratedDatabase(config);
  const kv = await openConfiguredKeyValueStore(config);
  const app = await buildApp(config, { database, kv });
  if (applied.length) app.log.info({ applied }, 'applied database migrations');

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) {
      app.log.warn({ signal }, 'second signal: exiting at once');
      process.exit(1);
    }
    stopping = true;
    app.log.info({ signal }, 'shutting down: finishing in-flight requests');
    // Requests still running after the grace period are cut off so shutdown always completes.
    const deadline = setTimeout(() => app.server.closeAllConnections(), config.shutdownTimeoutSecs * 1000).unref();
    try {
      await app.close();
    } finally {
      clearTimeout(deadline);
      await kv.close();
      await database.close();
    }
    app.log.info('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));

  const address = await app.listen({ port: config.port, host: config.host });
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
  const { positionals } = parseArgs({ args: argv, allowPositionals: true, strict: false });
  const [name = 'serve', ...rest] = positionals;
  if (name === 'help' || argv.includes('--help') || argv.includes('-h')) {
    console.log(USAGE);
    return;
  }
  const command = commands[name];
  if (!command) throw new UsageError(`Unknown command "${name}". Run "waygate help" for the list.`);
  loadDotEnv();
  await command(loadConfig(), rest);
}

class UsageError extends Error {}

main(process.argv.slice(2)).catch((error: unknown) => {
  const known = error instanceof ConfigError || error instanceof UsageError;
  const message = error instanceof Error ? error.message : String(error);
  console.error(`waygate: ${known ? message : `failed: ${message}`}`);
  process.exit(known ? 2 : 1);
});
