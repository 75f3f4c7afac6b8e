import type { FastifyRequest } from 'fastify';
import { callerOf } from '../../platform/auth/hooks.js';
import type { TrackingScope } from './scope.js';
import type { SharingService } from './service.js';

/**
 * The scope a request to a tracking route answers in, for the permission its `requireTracking(...)` declared:
 * read from the route's own config, so a route cannot be let in by one permission and scoped by another.
 */
export type RequestScope = (request: FastifyRequest) => Promise<TrackingScope>;

export function requestScopeOf(sharing: Pick<SharingService, 'scopeOf'>): RequestScope {
  return (request) => {
    const auth = request.routeOptions.config.auth;
    if (!auth?.ownScope || !auth.permission)
      throw new Error(`${request.routeOptions.url ?? request.url} is not declared with requireTracking`);
    return sharing.scopeOf(callerOf(request), auth.permission);
  };
}
