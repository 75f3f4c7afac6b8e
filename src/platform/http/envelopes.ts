import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { RequestErrors, type ErrorDefinition } from './errors.js';
import { Type, type Static, type TSchema } from 'typebox';

/** `{ error, message, code }`: the body of every error response. */
export const ErrorBody = Type.Object(
  {
    error: Type.String({ description: 'Name of the HTTP status', examples: ['NotFound'] }),
    message: Type.String({ description: 'What went wrong, for people' }),
    code: Type.String({
      description: 'Stable machine code `<area>.<reason>`; the codes a route answers are listed with its responses',
      examples: ['trip.not_found'],
    }),
  },
  { $id: 'ErrorBody', title: 'Error' },
);

export const SelfLinks = Type.Object({ self: Type.String({ format: 'uri' }) });

export const PageLinks = Type.Object({
  self: Type.String({ format: 'uri' }),
  first: Type.String({ format: 'uri' }),
  prev: Type.Optional(Type.String({ format: 'uri' })),
  next: Type.Optional(Type.String({ format: 'uri' })),
  last: Type.String({ format: 'uri' }),
});

export const Pagination = Type.Object({
  page: Type.Integer(),
  limit: Type.Integer(),
  total: Type.Integer(),
  total_pages: Type.Integer(),
});

/** `{ data, _links: { self } }` around one resource. */
export const SingleEnvelope = <T extends TSchema>(resource: T) => Type.Object({ data: resource, _links: SelfLinks });

/** `{ data: [...], pagination, _links }` around one page of resources. */
export const PageEnvelope = <T extends TSchema>(resource: T) =>
  Type.Object({ data: Type.Array(resource), pagination: Pagination, _links: PageLinks });

/** The `limit` query parameter: 1..100, default per endpoint. */
export const LimitParam = (defaultLimit: number) =>
  Type.Integer({ minimum: 1, maximum: 100, default: defaultLimit, description: 'Items per page, at most 100' });

/** `page` (default 1) and `limit` (1..100, default per endpoint) query parameters. */
export const PageQuery = (defaultLimit: number) =>
  Type.Object({
    page: Type.Integer({ minimum: 1, default: 1, description: 'Page number, from 1' }),
    limit: LimitParam(defaultLimit),
  });

/**
 * Error responses for the OpenAPI document: `...errorResponses(TripErrors.not_found, TripErrors.invalid_transition)`.
 * Errors of one status share a response whose description lists their codes (also as `x-error-codes`);
 * a bare status (`400`) documents the status without naming codes.
 */
export function errorResponses(...errors: (number | ErrorDefinition)[]): Record<number, object> {
  return withErrorResponses({}, errors);
}

/** `responses` with `errors` added, merging their codes into the statuses already documented there. */
export function withErrorResponses(
  responses: Record<string, unknown>,
  errors: (number | ErrorDefinition)[],
): Record<number, object> {
  const merged = { ...responses } as Record<number, object>;
  for (const error of errors) {
    const status = typeof error === 'number' ? error : error.status;
    const present = merged[status] as { $ref?: string; 'x-error-codes'?: string[] } | undefined;
    // A status answered with a body of its own (not the error body) keeps its schema.
    if (present && present.$ref !== 'ErrorBody') continue;
    const codes = [...(present?.['x-error-codes'] ?? [])];
    if (typeof error !== 'number' && !codes.includes(error.code)) codes.push(error.code);
    merged[status] = codes.length
      ? Type.Ref('ErrorBody', { description: `Codes: ${codes.join(', ')}`, 'x-error-codes': codes })
      : Type.Ref('ErrorBody');
  }
  return merged;
}

export interface PageRequest {
  page: number;
  limit: number;
}

/** Request targets `new URL` would hand back unchanged: no dot segments, nothing it percent-encodes. */
const CANONICAL_TARGET = /^\/(?!.*\/\.)[A-Za-z0-9\-._~!$&()*+,;=:@%/?]*$/;
const CANONICAL_BASES_MAX = 100;
const canonicalBases = new Map<string, string>();

/**
 * Absolute URL of this request (or of the same request with other query
 * values; an undefined value drops the parameter). The base is PUBLIC_URL when configured, else the request's own
 * protocol and host.
 */
export function requestUrl(request: FastifyRequest, query?: Record<string, string | undefined>): string {
  const base = publicBaseUrl(request);
  // Most self links need no parsing at all; this runs on every single-resource read.
  if (!query && CANONICAL_TARGET.test(request.url)) return canonicalBase(base) + request.url;
  const url = new URL(base + request.url);
  for (const [name, value] of Object.entries(query ?? {})) {
    if (value === undefined) url.searchParams.delete(name);
    else url.searchParams.set(name, value);
  }
  return url.toString();
}

/** PUBLIC_URL when configured (stored without a trailing slash), else the request's own protocol and host. */
export function publicBaseUrl(request: FastifyRequest): string {
  return request.server.config.publicUrl ?? `${request.protocol}://${request.host}`;
}

/**
 * Without PUBLIC_URL, links are built from the request's Host. One the URL standard cannot read as a host
 * (`a b`, `h:99999`) made every link a 500, on a write after its commit; one it reads as more than a host
 * (`a/b`, `a?b`, `u@h`) made links point elsewhere. Either is refused (400 `request.bad_host`) before any
 * handler runs.
 */
export function registerHostCheck(app: FastifyInstance): void {
  if (app.config.publicUrl) return;
  app.addHook('onRequest', (request, _reply, done) =>
    done(canonicalOf(publicBaseUrl(request)) === undefined ? RequestErrors.bad_host() : undefined),
  );
}

/**
 * The base as the URL standard writes it (no default port, lower-case host), remembered per base; undefined
 * for a base that is not a scheme and a host only (see `registerHostCheck`).
 */
function canonicalOf(base: string): string | undefined {
  let canonical = canonicalBases.get(base);
  if (canonical === undefined) {
    let url: URL;
    try {
      url = new URL(`${base}/`);
    } catch {
      return undefined;
    }
    if (url.pathname !== '/' || url.search || url.hash || url.username || url.password) return undefined;
    canonical = url.href.slice(0, -1);
    // Host headers are the client's to choose: the memo stays small.
    if (canonicalBases.size >= CANONICAL_BASES_MAX) canonicalBases.clear();
    canonicalBases.set(base, canonical);
  }
  return canonical;
}

/** The canonical base of a base the Host check (or PUBLIC_URL's validation) let through. */
const canonicalBase = (base: string): string => canonicalOf(base) ?? new URL(`${base}/`).href.slice(0, -1);

export function single<T>(request: FastifyRequest, data: T) {
  return { data, _links: { self: requestUrl(request) } };
}

/**
 * Answers 201 with `Location`: the absolute URL (under PUBLIC_URL, like every link) of the resource
 * at `path`, which the request created. Returns that URL. Every 201 goes through here or `created`.
 */
export function locateCreated(request: FastifyRequest, reply: FastifyReply, path: string): string {
  const url = canonicalBase(publicBaseUrl(request)) + path;
  reply.status(201).header('location', url);
  return url;
}

/**
 * The single envelope of a resource the request created, `<collection>/<id>` (the id is the record's
 * own unless given): 201, and `Location` and `_links.self` both name the new resource.
 */
export function created<T extends object>(
  request: FastifyRequest,
  reply: FastifyReply,
  collection: string,
  data: T,
  id = String((data as { id?: unknown }).id),
) {
  return { data, _links: { self: locateCreated(request, reply, `${collection}/${encodeURIComponent(id)}`) } };
}

const serializedSingles = new WeakMap<object, { self: string; body: string }>();

/**
 * The single envelope as JSON text, serialized by the route's own response schema once per record
 * object and self link. For records read far more often than they change and handed out as the
 * same frozen object while unchanged (the latest GPS point): serializing it again on every read
 * was a third of that route's cost.
 */
export function sendSerializedSingle(request: FastifyRequest, reply: FastifyReply, data: object): FastifyReply {
  const self = requestUrl(request);
  let memo = serializedSingles.get(data);
  if (memo?.self !== self) {
    memo = { self, body: reply.serialize({ data, _links: { self } }) as string };
    // Only an object nobody can change may answer for later requests.
    if (Object.isFrozen(data)) serializedSingles.set(data, memo);
  }
  // With a JSON content type, Fastify sends a string as it is.
  return reply.type('application/json; charset=utf-8').send(memo.body);
}

export function paginated<T>(request: FastifyRequest, data: T[], total: number, { page, limit }: PageRequest) {
  const totalPages = totalPagesOf(total, limit);
  const numbered = (n: number) => requestUrl(request, { page: String(n), limit: String(limit) });
  return pageEnvelope(
    data,
    { page, limit, total, total_pages: totalPages },
    numbered,
    page < totalPages ? numbered(page + 1) : undefined,
  );
}

export const totalPagesOf = (total: number, limit: number) => Math.max(1, Math.ceil(total / limit));

/**
 * `{ data, pagination, _links }`: `first`, `prev` and `last` are the `numbered` pages' links, `self` too
 * unless given; `next` when there is a next page.
 */
export function pageEnvelope<T>(
  data: T[],
  pagination: Static<typeof Pagination>,
  numbered: (page: number) => string,
  next: string | undefined,
  self = numbered(pagination.page),
) {
  const { page, total_pages: totalPages } = pagination;
  return {
    data,
    pagination,
    _links: {
      self,
      first: numbered(1),
      ...(page > 1 ? { prev: numbered(Math.min(page - 1, totalPages)) } : {}),
      ...(next ? { next } : {}),
      last: numbered(totalPages),
    },
  };
}

/**
 * Marks a page whose total is PostgreSQL's estimate rather than a count (platform/db/count.ts) with
 * `X-Total-Count-Estimated: true`; an exact total has no such header.
 */
export function sayIfEstimated(reply: FastifyReply, estimated: boolean): void {
  if (estimated) void reply.header('x-total-count-estimated', 'true');
}

/** SQL `offset` for a page. */
export const offsetOf = ({ page, limit }: PageRequest) => (page - 1) * limit;

/** `{ success, message }`: the answer of an action that has nothing else to return. */
export const SuccessMessage = Type.Object({ success: Type.Boolean(), message: Type.String() });

/** `{ data: [...], _links: { self } }`: a whole (unpaginated) collection. */
export const ListEnvelope = <T extends TSchema>(resource: T) =>
  Type.Object({ data: Type.Array(resource), _links: SelfLinks });
