import type { FastifyRequest } from 'fastify';
import { Type, type TSchema } from 'typebox';

/** `{ error, message }`: the body of every error response. */
export const ErrorBody = Type.Object(
  { error: Type.String({ examples: ['NotFound'] }), message: Type.String() },
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

/** `page` (default 1) and `limit` (1..100, default per endpoint) query parameters. */
export const PageQuery = (defaultLimit: number) =>
  Type.Object({
    page: Type.Integer({ minimum: 1, default: 1, description: 'Page number, from 1' }),
    limit: Type.Integer({ minimum: 1, maximum: 100, default: defaultLimit, description: 'Items per page, at most 100' }),
  });

/** Error responses for the OpenAPI document, e.g. `...errorResponses(400, 404)`. */
export function errorResponses(...statuses: number[]): Record<number, { $ref: string }> {
  return Object.fromEntries(statuses.map((status) => [status, Type.Ref('ErrorBody')]));
}

export interface PageRequest {
  page: number;
  limit: number;
}

/**
 * Absolute URL of this request (or of the same request with other query
 * values). The base is PUBLIC_URL when configured, else the request's own
 * protocol and host.
 */
export function requestUrl(request: FastifyRequest, query: Record<string, string> = {}): string {
  const url = new URL(publicBaseUrl(request) + request.url);
  for (const [name, value] of Object.entries(query)) url.searchParams.set(name, value);
  return url.toString();
}

/** PUBLIC_URL when configured, else the request's own protocol and host (no trailing slash). */
export function publicBaseUrl(request: FastifyRequest): string {
  return (request.server.config.publicUrl ?? `${request.protocol}://${request.host}`).replace(/\/+$/, '');
}

export function single<T>(request: FastifyRequest, data: T) {
  return { data, _links: { self: requestUrl(request) } };
}

export function paginated<T>(request: FastifyRequest, data: T[], total: number, { page, limit }: PageRequest) {
  const totalPages = Math.max(1, Math.ceil(total / limit));
  const at = (n: number) => requestUrl(request, { page: String(n), limit: String(limit) });
  return {
    data,
    pagination: { page, limit, total, total_pages: totalPages },
    _links: {
      self: at(page),
      first: at(1),
      ...(page > 1 ? { prev: at(Math.min(page - 1, totalPages)) } : {}),
      ...(page < totalPages ? { next: at(page + 1) } : {}),
      last: at(totalPages),
    },
  };
}

/** SQL `offset` for a page. */
export const offsetOf = ({ page, limit }: PageRequest) => (page - 1) * limit;

/** `{ data: [...], _links: { self } }`: a whole (unpaginated) collection. */
export const ListEnvelope = <T extends TSchema>(resource: T) => Type.Object({ data: Type.Array(resource), _links: SelfLinks });
