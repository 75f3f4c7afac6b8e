import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger, FastifyInstance, FastifyServerOptions } from 'fastify';
import type { Bindings, ChildLoggerOptions } from 'fastify/types/logger.js';
import { destination, levels, stdSerializers, type Level } from 'pino';

type LoggerOptions = Exclude<FastifyServerOptions['logger'], boolean | undefined>;

const INCOMING_REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

/**
 * pino options: JSON lines; anything that could carry a credential is redacted
 * should it ever be logged by mistake. Request lines never include headers,
 * bodies or query strings (tokens travel in all three).
 *
 * Without a stream, lines go to stdout asynchronously: a write per line on the request path cost
 * a quarter of the throughput of cached reads. Lines written while a write is under way go out
 * together with the next one, and pino flushes what is left when the process exits.
 */
export function loggerOptions(level: string, stream?: NodeJS.WritableStream): LoggerOptions {
  return {
    level,
    stream: stream ?? destination({ dest: 1, sync: false }),
    serializers: { err: serializeError },
    redact: {
      paths: [
        'req.headers.authorization',
        'req.headers.cookie',
        'req.headers["x-internal-token"]',
        'req.headers["x-id-app-key"]',
        'req.headers["x-id-app-assertion"]',
        '*.password',
        '*.token',
        '*.secret',
        // A request's path and query may carry tokens (GET /v1/sessions/{token}, ?token= of mailed links);
        // @fastify/websocket logs `path` for an upgrade to a route without WebSocket.
        'path',
        'url',
      ],
      censor: '[redacted]',
    },
  };
}

/**
 * Database drivers attach the failing query and its parameters to their errors; the parameters
 * can be token hashes, password hashes or emails, so neither reaches the log.
 */
function serializeError(err: Error): ReturnType<typeof stdSerializers.err> {
  const serialized = stdSerializers.err(err) as ReturnType<typeof stdSerializers.err> & Record<string, unknown>;
  delete serialized.params;
  delete serialized.query;
  delete serialized.queryOptions;
  delete serialized.parameters;
  return serialized;
}

/** Honours a sane incoming X-Request-Id so a proxy's id follows the request; otherwise a fresh UUID. */
export function requestIdFor(header: string | string[] | undefined): string {
  return typeof header === 'string' && INCOMING_REQUEST_ID.test(header) ? header : randomUUID();
}

/** One log line per request (at info): method, route, status, latency and request id. */
export function registerRequestLogging(app: FastifyInstance): void {
  // Hooks in callback form: no promise per request.
  app.addHook('onRequest', (request, response, done) => {
    response.header('x-request-id', request.id);
    done();
  });
  if (!isEnabled(app.log, 'info')) return;
  app.addHook('onResponse', (request, response, done) => {
    // The parent logger with the id as a field: the same line without building a child logger.
    app.log.info(
      {
        request_id: request.id,
        method: request.method,
        // The route pattern, not the path: paths may carry tokens or email addresses.
        route: request.routeOptions.url ?? '(no route)',
        status: response.statusCode,
        latency_ms: Math.round(response.elapsedTime * 100) / 100,
      },
      'request completed',
    );
    done();
  });
}

/**
 * Fastify's `childLoggerFactory`: every request gets a logger bound to its id, but building a pino
 * child costs more than the rest of a cached read, and most requests never log. This one builds
 * the child on the first line written at an enabled level.
 */
export function lazyChildLogger(
  logger: FastifyBaseLogger,
  bindings: Bindings,
  options: ChildLoggerOptions,
): FastifyBaseLogger {
  return new LazyChildLogger(logger, bindings, options);
}

class LazyChildLogger implements FastifyBaseLogger {
  #child: FastifyBaseLogger | undefined;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  get level(): string {
    return this.#child?.level ?? this.options.level ?? this.parent.level;
  }
  set level(level: string) {
    this.#built().level = level;
  }

  fatal(...args: unknown[]): void {
    this.#write('fatal', args);
  }
  error(...args: unknown[]): void {
    this.#write('error', args);
  }
  warn(...args: unknown[]): void {
    this.#write('warn', args);
  }
  info(...args: unknown[]): void {
    this.#write('info', args);
  }
  debug(...args: unknown[]): void {
    this.#write('debug', args);
  }
  trace(...args: unknown[]): void {
    this.#write('trace', args);
  }
  silent(): void {}

  /** pino's own check, for code that asks before building an expensive line. */
  isLevelEnabled(level: Level): boolean {
    return isEnabled(this, level);
  }

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.#built().child(bindings, options);
  }

  #write(level: Level, args: unknown[]): void {
    if (this.#child || isEnabled(this, level)) (this.#built()[level] as (...args: unknown[]) => void)(...args);
  }

  #built(): FastifyBaseLogger {
    return (this.#child ??= this.parent.child(this.bindings, this.options));
  }
}

function isEnabled(logger: FastifyBaseLogger, level: Level): boolean {
  const threshold = levels.values[logger.level];
  // A level pino does not know (a custom one) is treated as enabled: the real logger decides.
  return threshold === undefined || levels.values[level]! >= threshold;
}
