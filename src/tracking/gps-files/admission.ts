import { tooManyRequests } from '../../platform/http/errors.js';
import { GpsFileErrors } from './errors.js';

export interface ImportLimits {
  /** Imports (uploading or running) one user may have on a node at once (IMPORT_MAX_PER_USER). */
  perUser: number;
  /** Imports a node runs at once, all users together (IMPORT_MAX_CONCURRENT). */
  perNode: number;
  /** Bytes the node's spooled uploads may take on disk together (IMPORT_SPOOL_MAX_BYTES). */
  spoolMaxBytes: number;
}

/** How long a refused client is asked to wait: imports take seconds to minutes. */
const RETRY_AFTER_SECS = 30;

/**
 * The node's imports, counted from the first byte of an upload until its spooled file is removed: a
 * place per import (per user and per node), and the bytes on disk. Per node, as the rate limits' local
 * parts are: a node's disk and CPU are its own.
 */
export function createAdmission(limits: ImportLimits) {
  const perUser = new Map<string, number>();
  let places = 0;
  let spooled = 0;
  return {
    /** Takes a place for an import of `who`, or throws 429; the place is given back by `release`. */
    admit(who: string) {
      const held = perUser.get(who) ?? 0;
      if (held >= limits.perUser) {
        throw tooManyRequests(
          GpsFileErrors.too_many_imports,
          `You have ${held} imports running; wait for one to end (at most ${limits.perUser} at once)`,
          RETRY_AFTER_SECS,
        );
      }
      if (places >= limits.perNode)
        throw tooManyRequests(
          GpsFileErrors.too_many_imports,
          `This node runs ${places} imports, its most; send the file again later`,
          RETRY_AFTER_SECS,
        );
      perUser.set(who, held + 1);
      places++;
      let bytes = 0;
      let released = false;
      return {
        /** Counts bytes written to the spool; throws (503) when the node's spool would pass its limit. */
        spooling(more: number) {
          if (spooled + more > limits.spoolMaxBytes)
            throw GpsFileErrors.spool_full(undefined, { 'retry-after': String(RETRY_AFTER_SECS) });
          spooled += more;
          bytes += more;
        },
        release() {
          if (released) return;
          released = true;
          spooled -= bytes;
          places--;
          const left = (perUser.get(who) ?? 1) - 1;
          if (left > 0) perUser.set(who, left);
          else perUser.delete(who);
        },
      };
    },
  };
}

export type Admission = ReturnType<ReturnType<typeof createAdmission>['admit']>;
