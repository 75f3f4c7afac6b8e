import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { KeyValueStore } from '../kv/index.js';
import { Broadcast } from '../kv/broadcast.js';
import type { CacheStats } from '../kv/cache.js';
import { logAtMostEvery } from '../log-throttle.js';
import type { Caller } from './caller.js';
import { hashToken, OAUTH_ACCESS_TOKEN_PREFIX, SESSION_TOKEN_PREFIX } from './tokens.js';
import type { Clock } from '../clock.js';

/** The kind of credential a bearer token is, by its prefix. */
export function credentialKindOf(token: string): Caller['kind'] {
  if (token.startsWith(SESSION_TOKEN_PREFIX)) return 'session';
  return token.startsWith(OAUTH_ACCESS_TOKEN_PREFIX) ? 'oauth_token' : 'api_key';
}

/** Looks a credential up by the SHA-256 hash of its token; null when unknown, inactive or revoked. */
export type CredentialLookup = (tokenHash: string) => Promise<Caller | null>;

/**
 * Runs when neither cache knows a token, right before the database is asked: it may refuse (throw; made-up
 * tokens must not turn into a flood of queries), and may return what to tell once the lookup answered
 * (whether the credential was found: only unknown ones count as such).
 */
export type BeforeDatabaseLookup = () => Promise<((found: boolean) => Promise<void>) | undefined | void>;

export interface CredentialLookups {
  session: CredentialLookup;
  apiKey: CredentialLookup;
  /** OAuth access tokens (`wgat_`), owned by the OAuth provider. */
  oauthToken: CredentialLookup;
}

const SHARED_TTL_SECS = 300;
const LOCAL_TTL_MS = 15_000;
const LOCAL_MAX_ENTRIES = 10_000;
const UNKNOWN_TTL_SECS = 10;
const UNKNOWN = 'unknown';
const CHANNEL = 'credentials:invalidate';
const GENERATION_KEY = 'credentials:generation';

/** Pub/sub does not redeliver: this often, each node re-reads the shared generation in case it missed one. */
const GENERATION_CHECK_MS = 30_000;

type InvalidationMessage = { hashes: string[] } | { generation: string };

/**
 * Resolves bearer tokens to callers without touching the database on the hot
 * path: a small per-process cache in front of the shared key-value cache, both
 * filled from the database on a miss. Revocations delete the shared entry and
 * tell every node over pub/sub to drop its local one; a change that affects
 * many credentials (a role's permissions) starts a new cache generation.
 */
export class CredentialResolver {
  readonly #local = new Map<string, { caller: Caller | null; until: number }>();
  /** Counts invalidations seen by this process; a lookup that overlapped one does not fill the caches. */
  #invalidations = 0;
  #generation = '0';
  readonly #broadcast: Broadcast<InvalidationMessage>;
  #generationCheck: NodeJS.Timeout | undefined;
  readonly #listeners = new Set<(hashes: string[] | 'all') => void>();
  /** Resolutions so far by where the answer came from (for the metrics). */
  readonly stats: CacheStats = { local: 0, shared: 0, loaded: 0 };
  readonly #logFailure = logAtMostEvery();

  /** Registered at start-up by the modules that own the credentials (sessions, API keys). */
  #lookups: CredentialLookups = {
    session: () => Promise.reject(new Error('no session lookup registered')),
    apiKey: () => Promise.reject(new Error('no API key lookup registered')),
    oauthToken: () => Promise.reject(new Error('no OAuth token lookup registered')),
  };

  constructor(
    private readonly kv: KeyValueStore,
    private readonly log: FastifyBaseLogger,
    private readonly clock: Clock,
  ) {
    this.#broadcast = new Broadcast(kv, CHANNEL, log, (message, own) => this.#onInvalidation(message, own));
  }

  /**
   * Where a token not in the caches is looked up. The owners of the credentials need the resolver to
   * invalidate their entries, so they are built first and register their lookups afterwards.
   */
  useLookups(lookups: CredentialLookups): void {
    this.#lookups = lookups;
  }

  async start(): Promise<void> {
    this.#generation = (await this.#safely(() => this.kv.get(GENERATION_KEY))) ?? '0';
    await this.#broadcast.start();
    this.#generationCheck = setInterval(() => void this.syncGeneration(), GENERATION_CHECK_MS).unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.#generationCheck);
    await this.#broadcast.stop();
  }

  /** Adopts the shared generation when another node started a new one this node did not hear of. */
  async syncGeneration(): Promise<void> {
    const shared = await this.#safely(() => this.kv.get(GENERATION_KEY));
    if (shared && shared !== this.#generation) this.#applyGeneration(shared);
  }

  /**
   * The caller as this process's own cache knows it (null: a token known to be invalid), or
   * undefined when `resolve` must ask further. Synchronous: the common case costs no promise.
   */
  resolveLocally(tokenHash: string): Caller | null | undefined {
    const local = this.#local.get(tokenHash);
    if (!local || local.until <= this.clock.nowMs()) return undefined;
    this.stats.local++;
    return this.#unexpired(local.caller);
  }

  /** `beforeDatabase` runs only when neither cache knows the token (see `BeforeDatabaseLookup`). */
  async resolve(
    token: string,
    beforeDatabase?: BeforeDatabaseLookup,
    tokenHash = hashToken(token),
  ): Promise<Caller | null> {
    return this.resolveHash(tokenHash, credentialKindOf(token), beforeDatabase);
  }

  /**
   * As `resolve`, for a credential known only by its hash and kind: an open WebSocket re-checks the
   * credential it was opened with, which the server never keeps in clear.
   */
  async resolveHash(
    tokenHash: string,
    kind: Caller['kind'],
    beforeDatabase?: BeforeDatabaseLookup,
  ): Promise<Caller | null> {
    const local = this.resolveLocally(tokenHash);
    return local !== undefined ? local : this.#unexpired(await this.#resolveShared(tokenHash, kind, beforeDatabase));
  }

  /**
   * Calls `listener` whenever credentials are forgotten on this node: the hashes, or 'all' for a new
   * generation. Holders of long-lived connections re-check theirs then.
   */
  onInvalidated(listener: (hashes: string[] | 'all') => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Forgets these credentials on every node (after a revoke, regenerate, delete or role change). */
  async invalidate(tokenHashes: string[]): Promise<void> {
    if (tokenHashes.length === 0) return;
    this.#invalidations++;
    for (const hash of tokenHashes) this.#local.delete(hash);
    await this.#deleteShared(tokenHashes);
    // Told here rather than when the message comes back: a publish that fails must not skip this node.
    this.#notify(tokenHashes);
    await this.#broadcast.publish({ hashes: tokenHashes });
    // A request on another node that read the database just before the change may write its stale
    // result back after our delete; a second round a moment later closes that window.
    setTimeout(() => {
      void this.#deleteShared(tokenHashes).then(() => this.#broadcast.publish({ hashes: tokenHashes }));
    }, 1000).unref();
  }

  /** Forgets every cached credential on every node (after a change to a role's permissions). */
  async invalidateAll(): Promise<void> {
    const generation = randomUUID();
    this.#applyGeneration(generation);
    await this.#safely(() => this.kv.set(GENERATION_KEY, generation));
    await this.#broadcast.publish({ generation });
  }

  async #resolveShared(
    hash: string,
    kind: Caller['kind'],
    beforeDatabase?: BeforeDatabaseLookup,
  ): Promise<Caller | null> {
    const key = this.#sharedKey(hash);
    const cached = await this.#safely(() => this.kv.get(key));
    let caller: Caller | null;
    if (cached != null) {
      this.stats.shared++;
      caller = cached === UNKNOWN ? null : (JSON.parse(cached) as Caller);
    } else {
      this.stats.loaded++;
      const answered = await beforeDatabase?.();
      const seen = this.#invalidations;
      caller = await this.#lookupOf(kind)(hash);
      await answered?.(caller !== null);
      // The database may have been read just before a revocation landed: answer, but cache nothing.
      if (seen !== this.#invalidations) return caller;
      const ttl = caller ? SHARED_TTL_SECS : UNKNOWN_TTL_SECS;
      await this.#safely(() => this.kv.set(key, caller ? JSON.stringify(caller) : UNKNOWN, ttl));
      if (seen !== this.#invalidations) return caller;
    }
    this.#remember(hash, caller);
    return caller;
  }

  #lookupOf(kind: Caller['kind']): CredentialLookup {
    return kind === 'session'
      ? this.#lookups.session
      : kind === 'oauth_token'
        ? this.#lookups.oauthToken
        : this.#lookups.apiKey;
  }

  #remember(hash: string, caller: Caller | null): void {
    if (this.#local.size >= LOCAL_MAX_ENTRIES) this.#local.clear();
    this.#local.set(hash, { caller, until: this.clock.nowMs() + LOCAL_TTL_MS });
  }

  #onInvalidation(message: InvalidationMessage, own: boolean): void {
    this.#invalidations++;
    if ('generation' in message) {
      if (message.generation !== this.#generation) this.#applyGeneration(message.generation);
    } else {
      for (const hash of message.hashes) this.#local.delete(hash);
      // This node's own invalidations were announced when they were made.
      if (!own) this.#notify(message.hashes);
    }
  }

  #applyGeneration(generation: string): void {
    this.#invalidations++;
    this.#generation = generation;
    this.#local.clear();
    this.#notify('all');
  }

  #notify(hashes: string[] | 'all'): void {
    for (const listener of this.#listeners) {
      try {
        listener(hashes);
      } catch (err) {
        this.log.error({ err }, 'a credential invalidation listener failed');
      }
    }
  }

  #sharedKey(hash: string): string {
    return `credentials:${this.#generation}:${hash}`;
  }

  async #deleteShared(hashes: string[]): Promise<void> {
    await Promise.all(hashes.map((hash) => this.#safely(() => this.kv.delete(this.#sharedKey(hash)))));
  }

  /** A credential past its expiry (a session or key that ran out while cached) is no caller. */
  #unexpired(caller: Caller | null): Caller | null {
    return caller?.expiresAt != null && caller.expiresAt <= this.clock.nowMs() ? null : caller;
  }

  /** The cache is an optimisation: when the store is down, fall through to the database. */
  async #safely<T>(operation: () => Promise<T>): Promise<T | undefined> {
    try {
      return await operation();
    } catch (err) {
      this.#logFailure(this.log, 'warn', { err }, 'credential cache unavailable; reading the database');
      return undefined;
    }
  }
}
