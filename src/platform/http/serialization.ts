import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';

type SerializerCompiler = ReturnType<ReturnType<typeof SerializerSelector>>;

/**
 * Fastify's own response serializers (fast-json-stringify, same options), each built on the first
 * response that uses it instead of for every route and status at start: building all of them took
 * about 300 ms of every start, mostly for error statuses and routes a process may never answer.
 */
export function lazySerializers() {
  const build = SerializerSelector();
  return (...factoryArgs: Parameters<typeof build>): SerializerCompiler => {
    const compile = build(...factoryArgs);
    return (route) => {
      let serialize: ReturnType<SerializerCompiler> | undefined;
      return (doc) => (serialize ??= compile(route))(doc);
    };
  };
}

/**
 * A serializer of `schema` built as Fastify builds a response's (fast-json-stringify), on its first use: for
 * JSON that leaves other than as a response (a pub/sub message), several times faster than JSON.stringify
 * on objects holding Dates, and with exactly the fields of the schema.
 */
export function serializerOf<T>(schema: object): (value: T) => string {
  let serialize: ((doc: unknown) => string) | undefined;
  return (value) =>
    (serialize ??= SerializerSelector()()({ schema, method: 'GET', url: '', httpStatus: '200' }))(value);
}
