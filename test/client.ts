import type { FastifyInstance, InjectOptions } from 'fastify';
import { expect } from 'vitest';
import type { paths } from '../console/js/types/api.js';

/**
 * The HTTP tests' one request helper: `t.as(token)` (or `client(app, token)`) answers requests sent through
 * `app.inject` (on 'two-nodes' the round robin picks the node), typed by the generated API types
 * (console/js/types/api.d.ts, kept in sync by test/api-types.test.ts):
 *
 *   const api = t.as(admin);
 *   const created = await api.post('/v1/trips', { name: 'Run' }).expect(201);   // body: the 201 body
 *   const read = await api.get(`/v1/trips/${created.body.data.id}`);            // matched to /v1/trips/{id}
 *   expect(read.body).toEqual(...);                                              // body: every answer's union
 *   await api.get('/v1/devices', { query: { limit: 5 } });                        // query typed by the route
 *
 * - The path is the route's pattern written out (`/v1/trips/${id}`): each `{param}` matches one segment. A
 *   query string may be written into the path too (`?limit=x`, untyped: for deliberately bad values).
 * - The body is typed by the route's JSON request body. `unchecked(value)` sends anything (a wrong field, a
 *   string payload as it is): tests send bad input on purpose.
 * - The answer is `{ status, body, headers, text, bytes }`, one case per status the route declares, so `body` is the
 *   union of the route's answers until narrowed: by `.expect(status)` on the request (which asserts the status,
 *   showing the body when it differs) or by `if (answer.status === 200)`. `body` is the parsed JSON when the
 *   answer is JSON, else the text.
 * - `raw(options)` sends any inject request (a route outside the document, a URL built at run time) with the
 *   client's token, its body untyped as inject's `json()`.
 */
export interface Client {
  get<P extends PathOf<'get'>>(
    path: Known<P, 'get'>,
    options?: OptionsOf<Operation<P, 'get'>>,
  ): Pending<Answer<Operation<P, 'get'>>>;
  /** `options.body`: the JSON body some DELETE routes take (a 2FA code, the current password), typed by the route. */
  delete<P extends PathOf<'delete'>>(
    path: Known<P, 'delete'>,
    options?: OptionsOf<Operation<P, 'delete'>> & { body?: BodyOf<Operation<P, 'delete'>> },
  ): Pending<Answer<Operation<P, 'delete'>>>;
  post<P extends PathOf<'post'>>(
    path: Known<P, 'post'>,
    body?: BodyOf<Operation<P, 'post'>>,
    options?: OptionsOf<Operation<P, 'post'>>,
  ): Pending<Answer<Operation<P, 'post'>>>;
  put<P extends PathOf<'put'>>(
    path: Known<P, 'put'>,
    body?: BodyOf<Operation<P, 'put'>>,
    options?: OptionsOf<Operation<P, 'put'>>,
  ): Pending<Answer<Operation<P, 'put'>>>;
  patch<P extends PathOf<'patch'>>(
    path: Known<P, 'patch'>,
    body?: BodyOf<Operation<P, 'patch'>>,
    options?: OptionsOf<Operation<P, 'patch'>>,
  ): Pending<Answer<Operation<P, 'patch'>>>;
  /** Any inject request, with the client's token unless `headers` names another authorization. */
  raw(options: InjectOptions): Pending<RawAnswer>;
}

/** A body sent as it is, whatever the route expects (a missing field, a wrong type, a CSV file as a string). */
export function unchecked(value: unknown): never {
  return value as never;
}

/** A client sending `token` as its bearer (none when null or left out). */
export function client(app: FastifyInstance, token?: string | null): Client {
  const send = (method: Method, path: string, body: unknown, options: RequestOptions = {}) =>
    pending(app, token, {
      method: method.toUpperCase() as Uppercase<Method>,
      url: withQuery(path, options.query),
      ...(body !== undefined && { payload: body as InjectOptions['payload'] }),
      ...(options.headers && { headers: options.headers }),
      ...(options.remoteAddress && { remoteAddress: options.remoteAddress }),
    });
  return {
    get: (path, options) => send('get', path, undefined, options),
    delete: (path, options?: RequestOptions & { body?: unknown }) => send('delete', path, options?.body, options),
    post: (path, body, options) => send('post', path, body, options),
    put: (path, body, options) => send('put', path, body, options),
    patch: (path, body, options) => send('patch', path, body, options),
    raw: (options) => pending(app, token, options),
  } as Client;
}

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** The JSON body a route takes, e.g. `Partial<RequestBody<'post', '/v1/trips'>>` for a test's own defaults. */
export type RequestBody<M extends Method, P extends PathOf<M>> = BodyOf<Operation<P, M>>;

interface RequestOptions {
  query?: Record<string, unknown>;
  headers?: Record<string, string>;
  remoteAddress?: string;
}

/** Extra headers (over the client's authorization), the client address, and the route's query parameters. */
type OptionsOf<Op> = Omit<RequestOptions, 'query'> & { query?: QueryOf<Op> };
/** The options of a route's requests, e.g. `Options<'post', '/v1/gps/batch'>` for a test's own shorthand. */
export type Options<M extends Method, P extends PathOf<M>> = OptionsOf<Operation<P, M>>;

/** A request under way: await it for its answer, or `.expect(status)` to assert the status and narrow the body. */
export type Pending<A extends { status: number }> = Promise<A> & {
  expect<S extends A['status']>(status: S): Promise<Extract<A, { status: S }>>;
};

interface AnswerOf<Status, Body> {
  status: Status;
  /** The parsed JSON body when the answer is JSON, else the text. */
  body: Body;
  headers: Record<string, string | string[] | number | undefined>;
  text: string;
  /** The body as sent, for what is not text (an archive, a PDF). */
  bytes: Buffer;
}

/** One case per status the route declares. */
export type Answer<Op> = Op extends { responses: infer R }
  ? { [S in keyof R & number]: AnswerOf<S, ResponseBody<R[S]>> }[keyof R & number]
  : never;

/** An answer of `raw`: untyped, as inject's `json()`. */
export type RawAnswer = AnswerOf<number, any>;

type ResponseBody<R> = R extends { content: { 'application/json': infer B } }
  ? B
  : R extends { content: Record<string, unknown> }
    ? string
    : string;

type BodyOf<Op> = Op extends { requestBody?: infer B }
  ? NonNullable<B> extends { content: { 'application/json': infer J } }
    ? J
    : NonNullable<B> extends { content: Record<string, infer C> }
      ? C
      : undefined
  : undefined;

type QueryOf<Op> = Op extends { parameters: { query?: infer Q } }
  ? [NonNullable<Q>] extends [never]
    ? never
    : NonNullable<Q>
  : never;

/** `/v1/trips/{id}` -> `/v1/trips/${string}`: what a path of the route may be written as, before segments are matched. */
type Loose<K extends string> = K extends `${infer Head}{${string}}${infer Tail}` ? `${Head}${string}${Loose<Tail>}` : K;
type RoutesWith<M extends Method> = {
  [K in keyof paths]: [NonNullable<paths[K][M]>] extends [never] ? never : K;
}[keyof paths];
/** Every path a route of method `M` accepts, with or without a query string. */
export type PathOf<M extends Method> = Loose<RoutesWith<M>> | `${Loose<RoutesWith<M>>}?${string}`;

type Segments<S extends string> = S extends `${infer Head}/${infer Tail}` ? [Head, ...Segments<Tail>] : [S];
type SegmentsMatch<Given extends string[], Pattern extends string[]> = Given extends [
  infer G extends string,
  ...infer GR extends string[],
]
  ? Pattern extends [infer P extends string, ...infer PR extends string[]]
    ? (P extends `{${string}}` ? true : [G] extends [P] ? true : false) extends true
      ? SegmentsMatch<GR, PR>
      : false
    : false
  : Pattern extends []
    ? true
    : false;
type WithoutQuery<P extends string> = P extends `${infer Path}?${string}` ? Path : P;
/**
 * The route key a written path stands for: the key it spells out (`/v1/settings/public`), else the key whose
 * segments it matches, a `{param}` matching any one (`/v1/settings/${key}`).
 */
type RouteOf<P extends string, M extends Method> = P extends string
  ? [Spelled<WithoutQuery<P>, M>] extends [never]
    ? {
        [K in RoutesWith<M>]: SegmentsMatch<Segments<WithoutQuery<P>>, Segments<K>> extends true ? K : never;
      }[RoutesWith<M>]
    : Spelled<WithoutQuery<P>, M>
  : never;
type Spelled<P extends string, M extends Method> = { [K in RoutesWith<M>]: [P] extends [K] ? K : never }[RoutesWith<M>];
/** A written path that matches no route's segments fails to type-check, naming itself. */
type Known<P extends string, M extends Method> = [RouteOf<P, M>] extends [never]
  ? `no ${Uppercase<M>} route matches ${P}`
  : P;
type Operation<P extends string, M extends Method> = NonNullable<paths[RouteOf<P, M>][M]>;

function withQuery(path: string, query: Record<string, unknown> | undefined): string {
  if (!query) return path;
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    for (const item of Array.isArray(value) ? value : [value])
      if (item !== undefined) search.append(name, String(item));
  }
  const text = search.toString();
  return text ? `${path}${path.includes('?') ? '&' : '?'}${text}` : path;
}

function pending<A extends { status: number }>(
  app: FastifyInstance,
  token: string | null | undefined,
  options: InjectOptions,
): Pending<A> {
  const headers = { ...(token ? { authorization: `Bearer ${token}` } : {}), ...options.headers };
  const answer = app.inject({ ...options, headers }).then((response) => {
    const text = response.body;
    const json = String(response.headers['content-type'] ?? '').includes('json');
    let parsed: { value: unknown } | undefined;
    return {
      status: response.statusCode,
      // Parsed when first read, so an answer that is not what it claims fails only the test that reads it.
      get body() {
        parsed ??= { value: json ? JSON.parse(text) : text };
        return parsed.value;
      },
      headers: response.headers,
      text,
      bytes: response.rawPayload,
    } as unknown as A;
  });
  return Object.assign(answer, {
    async expect(status: number) {
      const received = await answer;
      expect(
        received.status,
        `${options.method ?? 'GET'} ${options.url as string} answered ${(received as unknown as RawAnswer).text}`,
      ).toBe(status);
      return received;
    },
  }) as Pending<A>;
}
