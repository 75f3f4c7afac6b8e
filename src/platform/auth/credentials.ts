import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { KeyValueStore } from '../kv/index.js';
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

const DELIVERY_WAIT_MS = 250;
/** Pub/sub does not redeliver: this often, each node re-reads the shared generation in case it missed one. */
const GENERATION_CHECK_MS = 30_000;

type InvalidationMessage = { id: string } & ({ hashes: string[] } | { generation: string });

/**
 * Resolves bearer tokens to callers without touching the database on the hot
 * path: a small per-process cache in front of the shared key-value cache, both
 * filled from the database on a miss. Revocations delete the shared entry and
 * tell every node over pub/sub to drop its local one; a change that affects
 * many credentials (a role's permissions) starts a new cache generation.
 */
export class CredentialResolver {
  readonly #local = new Map<string, { caller: Caller | null; until: number }>();
  readonly #awaitingDelivery = new Map<string, () => void>();
  /** Counts invalidations seen by this process; a lookup that overlapped one does not fill the caches. */
  #invalidations = 0;
  #generation = '0';
  #unsubscribe: (() => Promise<void>) | undefined;
  #generationCheck: NodeJS.Timeout | undefined;
  readonly #listeners = new Set<(hashes: string[] | 'all') => void>();

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
  ) {}

  /**
   * Where a token not in the caches is looked up. The owners of the credentials need the resolver to
   * invalidate their entries, so they are built first and register their lookups afterwards.
   */
  useLookups(lookups: CredentialLookups): void {
    this.#lookups = lookups;
  }

  async start(): Promise<void> {
    this.#generation = (await this.#safely(() => this.kv.get(GENERATION_KEY))) ?? '0';
    this.#unsubscribe = await this.kv.subscribe(CHANNEL, (message) => this.#onInvalidation(message));
    this.#generationCheck = setInterval(() => void this.syncGeneration(), GENERATION_CHECK_MS).unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.#generationCheck);
    await this.#unsubscribe?.();
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
    return local && local.until > this.clock.nowMs() ? this.#unexpired(local.caller) : undefined;
  }

  /**
   * `beforeDatabase` runs only when neither cache knows the token, right before the database is asked:
   * the caller may refuse there (made-up tokens must not turn into a flood of queries).
   */
  async resolve(token: string, beforeDatabase?: () => Promise<void>, tokenHash = hashToken(token)): Promise<Caller | null> {
    return this.resolveHash(tokenHash, credentialKindOf(token), beforeDatabase);
  }

  /**
   * As `resolve`, for a credential known only by its hash and kind: an open WebSocket re-checks the
   * credential it was opened with, which the server never keeps in clear.
   */
  async resolveHash(tokenHash: string, kind: Caller['kind'], beforeDatabase?: () => Promise<void>): Promise<Caller | null> {
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
    await this.#publish({ id: randomUUID(), hashes: tokenHashes });
    // A request on another node that read the database just before the change may write its stale
    // result back after our delete; a second round a moment later closes that window.
    setTimeout(() => {
      void this.#deleteShared(tokenHashes).then(() => this.#publish({ id: randomUUID(), hashes: tokenHashes }));
    }, 1000).unref();
  }

  /** Forgets every cached credential on every node (after a change to a role's permissions). */
  async invalidateAll(): Promise<void> {
    const generation = randomUUID();
    this.#applyGeneration(generation);
    await this.#safely(() => this.kv.set(GENERATION_KEY, generation));
    await this.#publish({ id: randomUUID(), generation });
  }

  async #resolveShared(hash: string, kind: Caller['kind'], beforeDatabase?: () => Promise<void>): Promise<Caller | null> {
    const key = this.#sharedKey(hash);
    const cached = await this.#safely(() => this.kv.get(key));
    let caller: Caller | null;
    if (cached != null) {
      caller = cached === UNKNOWN ? null : (JSON.parse(cached) as Caller);
    } else {
      await beforeDatabase?.();
      const seen = this.#invalidations;
      caller = await this.#lookupOf(kind)(hash);
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
    return kind === 'session' ? this.#lookups.session : kind === 'oauth_token' ? this.#lookups.oauthToken : this.#lookups.apiKey;
  }

  #remember(hash: string, caller: Caller | null): void {
    if (this.#local.size >= LOCAL_MAX_ENTRIES) this.#local.clear();
    this.#local.set(hash, { caller, until: this.clock.nowMs() + LOCAL_TTL_MS });
  }

  #onInvalidation(raw: string): void {
    let message: InvalidationMessage;
    try {
      message = JSON.parse(raw) as InvalidationMessage;
    } catch {
      this.log.warn('ignoring a malformed credential invalidation message');
      return;
    }
    this.#invalidations++;
    const own = this.#awaitingDelivery.get(message.id);
    own?.();
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

  /**
   * Publishes and waits (briefly) until this node hears its own message back: the
   * store delivers to every subscriber at once, so by then the other nodes have it
   * too, and the revoking response does not race ahead of their local caches.
   */
  async #publish(message: InvalidationMessage): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const delivered = new Promise<void>((resolve) => {
      this.#awaitingDelivery.set(message.id, resolve);
      timer = setTimeout(resolve, DELIVERY_WAIT_MS);
    });
    try {
      const published = await this.#safely(async () => {
        await this.kv.publish(CHANNEL, JSON.stringify(message));
        return true;
      });
      if (published) await delivered;
    } finally {
      clearTimeout(timer);
      this.#awaitingDelivery.delete(message.id);
    }
  }

  /** The cache is an optimisation: when the store is down, fall through to the database. */
  /** A credential past its expiry (a session or key that ran out while cached) is no caller. */
  #unexpired(caller: Caller | null): Caller | null {
    return caller?.expiresAt != null && caller.expiresAt <= this.clock.nowMs() ? null : caller;
  }

  async #safely<T>(operation: () => Promise<T>): Promise<T | undefined> {
    try {
      return await operation();
    } catch (err) {
      this.log.warn({ err }, 'credential cache unavailable');
      return undefined;
    }
  }
}
