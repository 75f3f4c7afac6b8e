// The console's requests typed by the generated API types (api.d.ts): a URL the console builds, such as
// `/v1/trips/${id}/gps?page=1`, is matched to its route ('/v1/trips/{id}/gps') segment by segment, and a call
// answers that route's success body. (Read by `npm run typecheck` only; the browser loads plain JavaScript.)
import type { paths } from './api';

export type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** The routes that answer `M`. */
type RoutesWith<M extends Method> = { [P in keyof paths]: paths[P][M] extends undefined ? never : P }[keyof paths];

type WithoutQuery<S extends string> = S extends `${infer Path}?${string}` ? Path : S;
type Segments<S extends string> = S extends `${infer Head}/${infer Rest}` ? [Head, ...Segments<Rest>] : [S];
/** Whether the segments of a URL fit a route's: the same literals, any one segment where the route has a {parameter}. */
type Fits<Url extends string[], Route extends string[]> = Route extends [
  infer R extends string,
  ...infer RouteRest extends string[],
]
  ? Url extends [infer U extends string, ...infer UrlRest extends string[]]
    ? R extends `{${string}}`
      ? Fits<UrlRest, RouteRest>
      : [U] extends [R]
        ? Fits<UrlRest, RouteRest>
        : false
    : false
  : Url extends []
    ? true
    : false;

/** The route a URL is of: the route it names exactly ('/v1/users/me'), else those whose parameters it fills. */
export type RouteOf<M extends Method, S extends string> =
  WithoutQuery<S> extends RoutesWith<M>
    ? WithoutQuery<S>
    : { [P in RoutesWith<M>]: Fits<Segments<WithoutQuery<S>>, Segments<P>> extends true ? P : never }[RoutesWith<M>];

/** A URL of a route that answers `M`; any other is refused with the message below. */
export type Known<M extends Method, S extends string> = [RouteOf<M, S>] extends [never]
  ? `no ${Uppercase<M>} route has the path ${S}`
  : S;

type Operation<M extends Method, S extends string> = NonNullable<paths[RouteOf<M, S>][M]>;
type SuccessOf<R> = R extends { 200: infer A }
  ? A
  : R extends { 201: infer A }
    ? A
    : R extends { 202: infer A }
      ? A
      : undefined;
type JsonOf<R> = R extends { content: { 'application/json': infer J } } ? J : undefined;

/** What the route answers when it succeeds (200, 201 or 202; undefined for 204). */
export type Answer<M extends Method, S extends string> = JsonOf<
  SuccessOf<Operation<M, S> extends { responses: infer R } ? R : never>
>;
/** The JSON body the route takes. */
export type RequestBody<M extends Method, S extends string> =
  Operation<M, S> extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never;
/** One item of a paginated list's `data`. */
export type Item<S extends string> = Answer<'get', S> extends { data: (infer I)[] } ? I : never;

/** A schema of the OpenAPI document by name: Schema<'Trip'>. */
export type Schema<Name extends keyof import('./api').components['schemas']> =
  import('./api').components['schemas'][Name];
