import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Kysely } from 'kysely';
import type { Schema } from './db/schema/index.js';

const VERSION = 'v1';

/**
 * Secrets at rest (TOTP secrets, third-party tokens) are sealed with
 * AES-256-GCM: `v1.<iv>.<tag>.<ciphertext>`, base64url. The key is SHA-256 of
 * SECRET_KEY, or 32 random bytes generated once and kept in DATA_DIR/secret.key
 * (several nodes must then share SECRET_KEY instead).
 */
export function createSecretBox(secretKey: string | undefined, dataDir: string) {
  return boxOfKey(secretKey ? createHash('sha256').update(secretKey).digest() : keyFromFile(keyFilePath(dataDir)));
}

/** Where the generated key is kept when SECRET_KEY is unset. */
export const keyFilePath = (dataDir: string) => join(dataDir, 'secret.key');

function boxOfKey(key: Buffer) {
  return {
    seal(plaintext: string): string {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return [VERSION, iv, cipher.getAuthTag(), ciphertext]
        .map((part) => (typeof part === 'string' ? part : part.toString('base64url')))
        .join('.');
    },

    /** Throws when the value was not sealed with this key or was altered. */
    open(sealed: string): string {
      const [version, ivText, tagText, ciphertext] = sealed.split('.');
      const iv = Buffer.from(ivText ?? '', 'base64url');
      const tag = Buffer.from(tagText ?? '', 'base64url');
      // A full-length tag is demanded: GCM would otherwise accept truncated (weaker) tags.
      if (version !== VERSION || iv.length !== 12 || tag.length !== 16 || ciphertext === undefined)
        throw new Error('not a sealed secret');
      const decipher = createDecipheriv('aes-256-gcm', key, iv, { authTagLength: 16 });
      decipher.setAuthTag(tag);
      return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
    },
  };
}

export type SecretBox = ReturnType<typeof boxOfKey>;

/** The key of secrets at rest is not the one the database's secrets were sealed with. */
export class SecretKeyMismatchError extends Error {}

const CHECK_VALUE = 'waygate secret key check';

/**
 * Stops a start whose key cannot open what the database holds sealed: a `SECRET_KEY` set (or changed) over
 * data sealed with `DATA_DIR/secret.key` or another value, as when moving to several nodes. The first start
 * after the check existed seals a known value with the key in use; every start opens it. (A key changed on
 * that same first start is not caught: there is nothing yet to compare with.)
 */
export async function verifySecretKey(db: Kysely<Schema>, box: SecretBox, keySource: string): Promise<void> {
  await db
    .insertInto('secret_key_check')
    .values({ sealed: box.seal(CHECK_VALUE) })
    .onConflict((oc) => oc.doNothing())
    .execute();
  const { sealed } = await db.selectFrom('secret_key_check').select('sealed').executeTakeFirstOrThrow();
  let opened: string | undefined;
  try {
    opened = box.open(sealed);
  } catch {
    opened = undefined;
  }
  if (opened !== CHECK_VALUE) {
    throw new SecretKeyMismatchError(
      `${keySource} is not the key this database's secrets were sealed with (2FA secrets, OAuth signing keys, ` +
        'integration tokens): start with the key used before (SECRET_KEY, or DATA_DIR/secret.key when SECRET_KEY was unset). ' +
        'Nodes share a generated key by copying DATA_DIR/secret.key to each; a new SECRET_KEY suits only a new database. ' +
        'If that key is lost, "waygate secrets reset" forgets what it sealed and seals with a new one (see docs/production.md).',
    );
  }
}

/**
 * Seals the check value anew with `box`, in the transaction of `waygate secrets reset`, which forgets every
 * secret sealed with a lost key: from then on starts need the key of `box`.
 */
export async function resealKeyCheck(trx: Kysely<Schema>, box: SecretBox): Promise<void> {
  await trx.deleteFrom('secret_key_check').execute();
  await trx
    .insertInto('secret_key_check')
    .values({ sealed: box.seal(CHECK_VALUE) })
    .execute();
}

/** A generated key waiting beside `secret.key` until the reset that made it commits. */
export interface StagedKey {
  box: SecretBox;
  /** Puts the new key in place; the key it replaces is kept aside, under the name returned. */
  install(now: Date): string | undefined;
  discard(): void;
}

/**
 * A new generated key for `waygate secrets reset`, in `secret.key.new` until the database has committed
 * the reset (`install`): a reset that fails leaves the old key in force, and one that stops between the
 * commit and the install leaves the new key beside the old, to be renamed by hand (or the reset run again).
 */
export function stageNewKey(dataDir: string): StagedKey {
  const file = keyFilePath(dataDir);
  const staged = `${file}.new`;
  const key = randomBytes(32);
  mkdirSync(dataDir, { recursive: true });
  rmSync(staged, { force: true });
  writeFileSync(staged, key.toString('base64'), { mode: 0o600, flag: 'wx' });
  return {
    box: boxOfKey(key),
    install(now) {
      const aside = `${file}.replaced-${now.toISOString().replace(/[:.]/g, '-')}`;
      const replaced = existsSync(file);
      if (replaced) renameSync(file, aside);
      renameSync(staged, file);
      return replaced ? aside : undefined;
    },
    discard: () => rmSync(staged, { force: true }),
  };
}

function keyFromFile(file: string): Buffer {
  if (!existsSync(file)) {
    mkdirSync(join(file, '..'), { recursive: true });
    // 'wx' fails when another process created the file meanwhile; its key is then read below.
    try {
      writeFileSync(file, randomBytes(32).toString('base64'), { mode: 0o600, flag: 'wx' });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
  const key = Buffer.from(readFileSync(file, 'utf8').trim(), 'base64');
  if (key.length !== 32) throw new Error(`${file} does not hold a 32-byte key`);
  return key;
}
