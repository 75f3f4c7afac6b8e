import type { FastifyInstance } from 'fastify';
import {
  GraphQLError,
  GraphQLObjectType,
  GraphQLScalarType,
  Kind,
  NoSchemaIntrospectionCustomRule,
  parse,
  print,
  printSchema,
  valueFromASTUntyped,
  type DocumentNode,
  type GraphQLSchema,
} from 'graphql';
import { getComplexity, type ComplexityEstimator } from 'graphql-query-complexity';
import mercurius from 'mercurius';
import { toErrorResponse } from '../../platform/http/errors.js';
import { graphiqlRoutes } from './graphiql.js';
import { depthLimit, isIntrospectionField } from './limits.js';
import { createLoaders, createResolvers, snake, type GraphQLContext, type GraphQLServices } from './resolvers.js';
import { typeDefs } from './schema.js';

/** Deepest selection a query may nest (me { … } is 2; trips { data { points { … } } } is 4). */
export const MAX_QUERY_DEPTH = 8;
/**
 * Cost budget of one operation. A field costs 1; a field that reads the database (every root field,
 * `Device.latestPosition`) 10 more; a list its items' cost times its `limit`; an unpaged list 100.
 */
export const MAX_QUERY_COST = 2000;
/** Root fields (aliases included) per operation: each is at least one database read. */
export const MAX_ROOT_FIELDS = 20;
const MAX_LIMIT = 100;
const UNPAGED_LIST_COST = 100;
const UNPAGED_LISTS = new Set(['latestPositions', 'apiKeys', 'mySessions', 'myIntegrations']);

/** camelCase GraphQL fields read the snake_case REST shapes the services return. */
function readSnakeCaseFields(schema: GraphQLSchema): GraphQLSchema {
  for (const type of Object.values(schema.getTypeMap())) {
    if (!(type instanceof GraphQLObjectType) || type.name.startsWith('__')) continue;
    for (const field of Object.values(type.getFields())) {
      if (field.resolve) continue;
      const key = snake(field.name);
      field.resolve = (parent: Record<string, unknown>) => (field.name in parent ? parent[field.name] : parent[key]);
    }
  }
  return schema;
}

const DateTime = new GraphQLScalarType({
  name: 'DateTime',
  serialize: (value) => (value instanceof Date ? value.toISOString() : value),
});
const JSONScalar = new GraphQLScalarType({
  name: 'JSON',
  serialize: (value) => value,
  parseValue: (value) => value,
  parseLiteral: (ast, variables) => valueFromASTUntyped(ast, variables),
});

/**
 * What a field costs (see MAX_QUERY_COST). A `limit` outside 1..100 is reported through `badLimit` and
 * refused before any resolver runs: a negative one must not lower the total.
 */
const costEstimator =
  (badLimit: () => void): ComplexityEstimator =>
  ({ type, field, args, childComplexity }) => {
    // Schema introspection reads the schema in memory: free, whatever it selects (GraphiQL's and code
    // generators' standard query asks for all of it).
    if (isIntrospectionField(field.name)) return 0;
    const reads = type.name === 'Query' || (type.name === 'Device' && field.name === 'latestPosition') ? 10 : 0;
    if (UNPAGED_LISTS.has(field.name)) return UNPAGED_LIST_COST + childComplexity;
    if (!field.args.some((arg) => arg.name === 'limit')) return 1 + reads + childComplexity;
    const limit = args.limit as number;
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) badLimit();
    return 1 + reads + Math.max(1, limit) * Math.max(1, childComplexity);
  };

function rootFieldCount(document: DocumentNode): number {
  return document.definitions.reduce(
    (sum, definition) =>
      sum + (definition.kind === Kind.OPERATION_DEFINITION ? definition.selectionSet.selections.length : 0),
    0,
  );
}

/** GraphQL errors carry the REST codes: `extensions: { code, status }`. Validation failures answer 400. */
function formatError(error: GraphQLError, log: FastifyInstance['log']) {
  const extensions = error.extensions as { code?: string; status?: number };
  if (extensions.code?.startsWith('graphql.') || extensions.code === 'request.validation')
    return { ...error.toJSON(), extensions };
  const original = error.originalError;
  if (!original || original instanceof GraphQLError)
    return { ...error.toJSON(), extensions: { code: 'graphql.invalid_query', status: 400 } };
  const { status, body, unexpected } = toErrorResponse(original);
  if (unexpected) log.error({ err: original }, 'unexpected error in a GraphQL resolver');
  return {
    message: body.message,
    locations: error.locations,
    path: error.path,
    extensions: { code: body.code, status },
  };
}

function validationError(error: Error & { code?: string }): GraphQLError {
  const own =
    error instanceof GraphQLError &&
    typeof error.extensions.code === 'string' &&
    error.extensions.code.startsWith('graphql.');
  const code = own ? (error.extensions.code as string) : 'graphql.invalid_query';
  return new GraphQLError(error.message, {
    ...(error instanceof GraphQLError ? { nodes: error.nodes, path: error.path } : {}),
    extensions: { code, status: 400 },
  });
}

/**
 * GraphQL at /v1/gql (mercurius), its SDL at /v1/schema, GraphiQL at /v1/graphiql. Anonymous requests
 * reach the resolvers, which gate themselves exactly as the matching REST routes do (rule 7 of the
 * spec left this open: `verifyTwoFactorLogin` is anonymous by nature, every other resolver refuses
 * anonymous callers with 401 auth.unauthorized).
 */
export async function graphqlRoutes(
  app: FastifyInstance,
  options: { services: GraphQLServices; introspection: boolean; graphiql: boolean; defaultLocale: string },
): Promise<void> {
  const { services } = options;
  // Every route with a body documents 400 as { error, message, code }; GraphQL's 400 is { data, errors }
  // (or that body for a request that is not JSON at all), so its serialiser must not be held to either.
  app.addHook('onRoute', (route) => {
    const response = (route.schema as { response?: Record<string, unknown> } | undefined)?.response;
    if (response?.['400'])
      response['400'] = {
        description:
          'Not valid GraphQL, too deep or too costly: `{ data: null, errors }`, each error with `extensions.code`',
      };
    // mercurius declares its answer as the range `2xx`; the endpoint answers 200 only, and client
    // generators (orval) cannot type a range key.
    if (response?.['2xx']) {
      response['200'] = response['2xx'];
      delete response['2xx'];
    }
    // Documentation only: GraphiQL's page and scripts are no API; the endpoint takes a credential when it has one.
    if (route.url.startsWith('/v1/graphiql')) route.schema = { ...route.schema, hide: true };
    else if (route.url === '/v1/gql') {
      const body = (route.schema as { body?: object } | undefined)?.body;
      route.schema = {
        ...route.schema,
        ...(body
          ? {
              body: {
                ...body,
                examples: [
                  {
                    query: 'query Trips($limit: Int) { trips(limit: $limit) { data { id name status } } }',
                    variables: { limit: 5 },
                  },
                ],
              },
            }
          : {}),
        summary: 'Run a GraphQL query or mutation',
        description:
          'Resolvers check the credential as the REST routes do: anonymous callers get `auth.unauthorized` in `errors` (except `verifyTwoFactorLogin`).',
        security: [{ bearer: [] }, {}],
      } as typeof route.schema;
    }
  });
  const resolvers = createResolvers(services, options.defaultLocale);
  await app.register(mercurius, {
    schema: typeDefs,
    resolvers: { ...resolvers, DateTime, JSON: JSONScalar } as never,
    schemaTransforms: [readSnakeCaseFields],
    prefix: '/v1',
    path: '/gql',
    // GraphiQL is served below from this service's own files (graphiql.ts), not mercurius's CDN page.
    graphiql: false,
    // The depth limit leaves schema introspection out (its standard query nests 15 levels, all in memory).
    validationRules: [depthLimit(MAX_QUERY_DEPTH), ...(options.introspection ? [] : [NoSchemaIntrospectionCustomRule])],
    context: (request): GraphQLContext => ({ request, caller: request.caller, loaders: createLoaders(services) }),
    errorFormatter: (execution, context) => {
      const errors = execution.errors
        .flatMap((error) => {
          const inner = (error.originalError as { errors?: (Error & { code?: string })[] } | undefined)?.errors;
          return Array.isArray(inner) ? inner.map(validationError) : [error];
        })
        .map((error) => formatError(error, context.reply?.log ?? app.log));
      // An error without a path is about the request as a whole (not valid GraphQL, too deep, a body
      // that is not JSON): its HTTP status. Errors of resolvers travel in a 200 beside the data.
      const requestError = errors.find((error) => !error.path);
      return {
        statusCode: requestError ? (requestError.extensions.status ?? 400) : 200,
        response: { data: execution.data ?? null, errors } as never,
      };
    },
  });

  // Text that is not GraphQL but parses as JSON (`query=true`, a made-up AST) reaches mercurius as a
  // "document" (it accepts ready-made ASTs): only what prints and parses back as GraphQL goes on to be
  // validated and walked. (Runs once per distinct query; known ones come from mercurius's cache.)
  app.graphql.addHook('preValidation', async (_schema, document) => {
    const candidate = document as { kind?: unknown } | null;
    try {
      if (candidate?.kind !== Kind.DOCUMENT) throw new Error('not a document');
      parse(print(document));
    } catch {
      throw new GraphQLError('The query is not a GraphQL document', {
        extensions: { code: 'graphql.invalid_query', status: 400 },
      });
    }
  });

  app.graphql.addHook('preExecution', async (schema, document, _context, variables) => {
    if (rootFieldCount(document) > MAX_ROOT_FIELDS) {
      throw new GraphQLError(`At most ${MAX_ROOT_FIELDS} root fields (aliases included) per request`, {
        extensions: { code: 'graphql.too_costly', status: 400 },
      });
    }
    let cost: number;
    let limitOutOfRange = false;
    try {
      cost = getComplexity({
        schema,
        query: document,
        variables: variables ?? {},
        estimators: [costEstimator(() => (limitOutOfRange = true))],
        maxQueryNodes: 1000,
      });
    } catch {
      // More nodes than maxQueryNodes (the library stops counting there).
      cost = Number.POSITIVE_INFINITY;
    }
    if (limitOutOfRange) {
      throw new GraphQLError(`Argument 'limit' must be between 1 and ${MAX_LIMIT}`, {
        extensions: { code: 'request.validation', status: 400 },
      });
    }
    if (cost > MAX_QUERY_COST) {
      throw new GraphQLError(
        `Query costs ${cost}, more than the ${MAX_QUERY_COST} allowed: ask for fewer items or fields`,
        {
          extensions: { code: 'graphql.too_costly', status: 400 },
        },
      );
    }
  });

  if (options.graphiql) await app.register(graphiqlRoutes);
  if (options.introspection) {
    const sdl = printSchema(app.graphql.schema);
    app.get('/v1/schema', { schema: { hide: true } }, async (_request, reply) =>
      reply.type('text/plain; charset=utf-8').send(sdl),
    );
  }
}
