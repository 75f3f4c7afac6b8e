/**
 * The one place that reads driver error codes (PostgreSQL SQLSTATE, socket errors of `pg`, PGlite's
 * closed-database error). Everything else asks `classifyDatabaseError` or `isConstraintViolation`.
 */

export type DatabaseFault =
  /** 23505: a unique constraint or index. */
  | 'unique_violation'
  /** 23503: a row points to nothing (insert/update) or is still pointed to (delete). */
  | 'foreign_key_violation'
  /** 23514, 23502: a check or not-null constraint. */
  | 'check_violation'
  /** 22021, 22P05: text the database cannot store (a NUL byte, an invalid byte sequence). */
  | 'invalid_text'
  /** 22P02, 22003, 22007, 22008: a value of the wrong format or out of range. */
  | 'invalid_value'
  /** The database cannot be reached or ended the connection. */
  | 'unavailable';

export interface DatabaseError {
  fault: DatabaseFault;
  /** Name of the violated constraint or index, when the database says. */
  constraint?: string;
  /** PostgreSQL's DETAIL line, e.g. `Key (device_id)=(…) is not present in table "devices".` */
  detail?: string;
}

const SQLSTATE_FAULTS: Record<string, DatabaseFault> = {
  '23505': 'unique_violation',
  '23503': 'foreign_key_violation',
  '23514': 'check_violation',
  '23502': 'check_violation',
  '22021': 'invalid_text',
  '22P05': 'invalid_text',
  '22P02': 'invalid_value',
  '22003': 'invalid_value',
  '22007': 'invalid_value',
  '22008': 'invalid_value',
  // Class 08 (connection exception) and 57P0x (the server is shutting down or restarting).
  '08000': 'unavailable',
  '08003': 'unavailable',
  '08006': 'unavailable',
  '08001': 'unavailable',
  '08004': 'unavailable',
  '57P01': 'unavailable',
  '57P02': 'unavailable',
  '57P03': 'unavailable',
  // A statement cancelled (statement_timeout, or an administrator): the database is overloaded, not the request wrong.
  '57014': 'unavailable',
};

/**
 * Any other class 22 (data exception: a value too long, out of range, of the wrong form) is the
 * request's value, not our fault: 400, never 500.
 */
const sqlstateClassFault = (code: string): DatabaseFault | undefined => {
  if (/^22[0-9A-Z]{3}$/.test(code)) return 'invalid_value';
  // Class 53, insufficient resources (too many connections when several nodes share a server, out of memory, disk full): 503.
  if (/^53[0-9A-Z]{3}$/.test(code)) return 'unavailable';
  return undefined;
};

/** Node socket and DNS errors of the `pg` driver when the server is gone or cannot be reached for now. */
const SOCKET_ERRORS = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ENETUNREACH',
  'ENETDOWN',
]);

/** Messages of `pg` and PGlite for a connection that is closed or was never opened. */
const CONNECTION_LOST =
  /Connection terminated|connection timeout|Client has encountered a connection error|PGlite is closed|database is closed|timeout exceeded when trying to connect/i;

export function classifyDatabaseError(err: unknown): DatabaseError | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const { code, constraint, detail, message } = err as {
    code?: unknown;
    constraint?: unknown;
    detail?: unknown;
    message?: unknown;
  };
  const fault =
    (typeof code === 'string' &&
      (SQLSTATE_FAULTS[code] ?? sqlstateClassFault(code) ?? (SOCKET_ERRORS.has(code) ? 'unavailable' : undefined))) ||
    (typeof message === 'string' && CONNECTION_LOST.test(message) ? 'unavailable' : undefined);
  if (!fault) return undefined;
  return {
    fault,
    ...(typeof constraint === 'string' ? { constraint } : {}),
    ...(typeof detail === 'string' ? { detail } : {}),
  };
}

/** Whether `err` is a violation of the named constraint or index (any kind). */
export function isConstraintViolation(err: unknown, constraint: string): boolean {
  return classifyDatabaseError(err)?.constraint === constraint;
}
