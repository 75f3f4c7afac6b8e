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
