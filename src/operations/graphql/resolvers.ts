import type { Static } from 'typebox';
import DataLoader from 'dataloader';
import type { FastifyRequest } from 'fastify';
import type { Caller } from '../../platform/auth/caller.js';
import {
  bearerTokenHash,
  refusalFor,
  requireAuthenticated,
  requirePermission,
  requireTracking,
  userIdOf,
  type RouteAuth,
} from '../../platform/auth/hooks.js';
import { offsetOf, totalPagesOf } from '../../platform/http/envelopes.js';
import { keysetPageOf, nextCursor, startOf, type KeysetPage } from '../../platform/http/keyset.js';
import { AuthErrors, RequestErrors } from '../../platform/http/errors.js';
import { compileBodyCheck } from '../../platform/http/validation.js';
import { InternalAuditBody } from '../audit/schemas.js';
import type { AuditService } from '../audit/service.js';
import type { RealtimeService } from '../realtime/service.js';
import type { SignInService } from '../../identity/sign-in/service.js';
import { ReauthenticationBody } from '../../identity/sign-in/schemas.js';
import { ACCOUNT_DELETION_MESSAGE, type SelfDeletion } from '../../identity/self-deletion/service.js';
import { DeleteMyAccountBody } from '../../identity/self-deletion/schemas.js';
import { PASSWORD_CHANGED_MESSAGE, type PasswordResetService } from '../../identity/passwords/service.js';
import { ChangePasswordBody } from '../../identity/passwords/schemas.js';
import { SessionErrors } from '../../identity/sessions/errors.js';
import type { ApiKeysService } from '../../identity/api-keys/service.js';
import { READ_INTEGRATIONS, type IntegrationsService } from '../../identity/integrations/service.js';
import { SIGN_OUT_OF_APPS, type SessionsService } from '../../identity/sessions/service.js';
import { LogoutEverywhereBody } from '../../identity/sessions/schemas.js';
import type { TwoFactorService } from '../../identity/two-factor/service.js';
import type { PasskeysService } from '../../identity/passkeys/service.js';
import {
  PasskeySecondFactorBody,
  PasskeySecondFactorOptionsBody,
  PasskeySignInBody,
  PasskeySignInOptionsBody,
  RegisterPasskeyBody,
  RenamePasskeyBody,
} from '../../identity/passkeys/schemas.js';
import { SESSION_AUTH } from '../../identity/sessions/index.js';
import { VerifyLoginBody } from '../../identity/two-factor/schemas.js';
import type { UsersService } from '../../identity/users/service.js';
import { OAuthSignInBody } from '../../identity/users/schemas.js';
import { OauthSignInErrors } from '../../identity/users/errors.js';
import type { DevicesService } from '../../tracking/devices/service.js';
import type { GpsService } from '../../tracking/gps/service.js';
import { UpdateDeviceBody } from '../../tracking/devices/schemas.js';
import { keyOfPoint } from '../../tracking/gps/schemas.js';
import type { LocationsService } from '../../tracking/locations/service.js';
import type { EventsService } from '../../tracking/events/service.js';
import { EVENT_TYPES, keyOfEvent } from '../../tracking/events/schemas.js';
import type { TripsService } from '../../tracking/trips/service.js';
import type { TrackingScope } from '../../tracking/sharing/index.js';
import type { SharingService } from '../../tracking/sharing/service.js';

/** The services the resolvers call: the same functions the REST routes call, so no rule lives twice. */
export interface GraphQLServices {
  users: Pick<UsersService, 'oauthSignIn'>;
  signIn: Pick<SignInService, 'logoutAllSessions'>;
  passwordReset: Pick<PasswordResetService, 'change'>;
  selfDeletion: Pick<SelfDeletion, 'deleteOwn'>;
  twoFactor: Pick<TwoFactorService, 'verifyLogin'>;
  passkeys: Pick<
    PasskeysService,
    | 'list'
    | 'registrationOptions'
    | 'register'
    | 'rename'
    | 'remove'
    | 'signInOptions'
    | 'signIn'
    | 'secondFactorOptions'
    | 'verifySecondFactor'
  >;
  sessions: Pick<SessionsService, 'logoutEverywhere' | 'logoutApp' | 'listMine'>;
  apiKeys: Pick<ApiKeysService, 'list'>;
  integrations: Pick<IntegrationsService, 'list'>;
  realtime: Pick<RealtimeService, 'mintTicket'>;
  audit: Pick<AuditService, 'ingest'>;
  devices: Pick<DevicesService, 'page' | 'get' | 'byIds' | 'update'>;
  trips: Pick<TripsService, 'page' | 'get' | 'points'>;
  gps: Pick<GpsService, 'page' | 'get' | 'latestIn' | 'latestPerDeviceIn' | 'remove' | 'firstPointsOfTrips'>;
  sharing: Pick<SharingService, 'scopeOf'>;
  locations: Pick<LocationsService, 'page'>;
  trackingEvents: Pick<EventsService, 'page'>;
}

export interface GraphQLContext {
  request: FastifyRequest;
  caller: Caller | null;
  loaders: ReturnType<typeof createLoaders>;
}

type Args = Record<string, unknown>;
type Row = Record<string, unknown>;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The REST guard's rules (`config.auth` of the matching route). The system key passes only where
 * the REST allowlist would let it (`systemKeyAllowed`): /v1/gql is on the allowlist so that the
 * resolvers meant for it are reachable, not to open every resolver to it.
 */
function guard(context: GraphQLContext, auth: RouteAuth, systemKeyAllowed = false): Caller {
  const { caller } = context;
  if (caller?.isSystem && !systemKeyAllowed && !auth.systemKey) throw AuthErrors.system_key_not_permitted();
  const refused = refusalFor(caller, auth);
  if (refused) throw refused;
  return caller!;
}

function uuidArg(args: Args, name: string): string {
  const value = args[name];
  if (typeof value !== 'string' || !UUID.test(value))
    throw RequestErrors.validation(`Argument '${name}' must be a UUID`);
  return value.toLowerCase();
}

/** `limit` is checked (1..100) for every field before execution, with the query's cost (routes.ts). */
function pageArgs(args: Args): { page: number; limit: number } {
  const page = args.page as number;
  if (page < 1) throw RequestErrors.validation("Argument 'page' must be >= 1");
  return { page, limit: args.limit as number };
}

/**
 * A paginated list resolver: the REST route's permission (or its scope, `scoped`), its page function, the REST
 * pagination object.
 */
function pageOf<S = undefined>(
  permission: string | ((context: GraphQLContext) => Promise<S>),
  load: (limit: number, offset: number, args: Args, scope: S) => Promise<{ rows: unknown[]; total: number }>,
) {
  return async (_: unknown, args: Args, context: GraphQLContext) => {
    let scope = undefined as S;
    if (typeof permission === 'string') guard(context, requirePermission(permission));
    else scope = await permission(context);
    const { page, limit } = pageArgs(args);
    const { rows, total } = await load(limit, offsetOf({ page, limit }), args, scope);
    return { data: rows, pagination: { page, limit, total, total_pages: totalPagesOf(total, limit) } };
  };
}

/** An optional ISO 8601 time argument (400 naming it when it is not one). */
function timeArg(args: Args, name: string): Date | undefined {
  const value = args[name];
  if (value === undefined || value === null) return undefined;
  const time = typeof value === 'string' ? new Date(value) : undefined;
  if (!time || Number.isNaN(time.getTime()) || !/^\d{4}-\d{2}-\d{2}T/.test(value as string))
    throw RequestErrors.validation(`Argument '${name}' must be an ISO 8601 date-time`);
  return time;
}

/** The page `page`/`limit`/`after` ask for on a keyset list (see platform/http/keyset.ts). */
function keysetPageOfArgs(list: string, args: Args): KeysetPage {
  if (typeof args.page === 'number' && args.page < 1) throw RequestErrors.validation("Argument 'page' must be >= 1");
  const query = {
    page: (args.page as number | null) ?? undefined,
    limit: args.limit as number,
    after: (args.after as string | null) ?? undefined,
  };
  return keysetPageOf(list, query, 'Argument');
}

/** A `GpsPointPage`: the REST pagination object, whether its total is estimated, and the next cursor. */
function pointPage<T extends { timestamp: Date; id: string }>(
  page: KeysetPage,
  found: { rows: T[]; more: boolean; total: number; estimated: boolean },
) {
  return {
    data: found.rows,
    pagination: {
      page: page.page,
      limit: page.limit,
      total: found.total,
      total_pages: totalPagesOf(found.total, page.limit),
    },
    total_estimated: found.estimated,
    next: nextCursor(found, page, keyOfPoint) ?? null,
  };
}

export const snake = (name: string) => name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
const camel = (name: string) => name.replace(/_([a-z])/g, (_, letter: string) => letter.toUpperCase());

/**
 * A GraphQL input checked against the REST body schema of the same operation (the same limits, NUL
 * and finiteness rules): 400 naming the input field otherwise. `keys` maps input names to body names.
 */
function bodyFrom<T>(
  check: (data: unknown) => string | undefined,
  input: Args,
  keys: (name: string) => string = snake,
): T {
  const body = Object.fromEntries(
    Object.entries(input)
      .filter(([, value]) => value !== undefined)
      .map(([key, value]) => [keys(key), value]),
  );
  const problem = check(body);
  if (problem)
    throw RequestErrors.validation(
      problem.replace(/^Body field '([^']+)'/, (_, field: string) => `Input field '${camel(field)}'`),
    );
  return body as T;
}

const checks = {
  verifyLogin: compileBodyCheck(VerifyLoginBody),
  logoutEverywhere: compileBodyCheck(LogoutEverywhereBody),
  changePassword: compileBodyCheck(ChangePasswordBody),
  deleteMyAccount: compileBodyCheck(DeleteMyAccountBody),
  passkeyCreationOptions: compileBodyCheck(ReauthenticationBody),
  oauthSignIn: compileBodyCheck(OAuthSignInBody),
  audit: compileBodyCheck(InternalAuditBody),
  updateDevice: compileBodyCheck(UpdateDeviceBody),
  registerPasskey: compileBodyCheck(RegisterPasskeyBody),
  renamePasskey: compileBodyCheck(RenamePasskeyBody),
  passkeySignInOptions: compileBodyCheck(PasskeySignInOptionsBody),
  passkeySignIn: compileBodyCheck(PasskeySignInBody),
  passkeySecondFactorOptions: compileBodyCheck(PasskeySecondFactorOptionsBody),
  passkeySecondFactor: compileBodyCheck(PasskeySecondFactorBody),
};

/** As the REST passkey routes (`sessionOnly`): your own passkeys take a session, never a key or an app's token. */
function sessionOf(context: GraphQLContext): Caller {
  const caller = guard(context, SESSION_AUTH);
  if (caller.kind !== 'session') throw SessionErrors.session_required();
  return caller;
}

/** Sign-in operations are anonymous by nature; the system key is refused, as on REST. */
function anonymous(context: GraphQLContext): void {
  if (context.caller?.isSystem) throw AuthErrors.system_key_not_permitted();
}

/** Per request: lookups that many parent objects make at once are batched into one query each. */
export function createLoaders(services: GraphQLServices) {
  return {
    device: new DataLoader<string, Row | null>(async (ids) => {
      const found = new Map((await services.devices.byIds(ids)).map((device) => [device.id, device as Row]));
      return ids.map((id) => found.get(id) ?? null);
    }),
    /** Keyed by limit, then trip: the points of every trip on the page in one query. */
    tripPoints: new Map<number, DataLoader<string, Row[]>>(),
    /** The caller's tracking scope per permission, worked out once per request. */
    scopes: new Map<string, Promise<TrackingScope>>(),
  };
}

/**
 * The scope a tracking field answers in, as its REST route's (`requireTracking`): every device with the global
 * permission, else the caller's own and shared devices (docs/sharing.md).
 */
function scopeIn(services: GraphQLServices, context: GraphQLContext, permission: string): Promise<TrackingScope> {
  const caller = guard(context, requireTracking(permission));
  let scope = context.loaders.scopes.get(permission);
  if (!scope) {
    scope = services.sharing.scopeOf(caller, permission);
    context.loaders.scopes.set(permission, scope);
  }
  return scope;
}

function tripPointsLoader(
  services: GraphQLServices,
  context: GraphQLContext,
  limit: number,
): DataLoader<string, Row[]> {
  let loader = context.loaders.tripPoints.get(limit);
  if (!loader) {
    loader = new DataLoader(async (tripIds) => {
      const byTrip = new Map<string, Row[]>(tripIds.map((id) => [id, []]));
      for (const point of await services.gps.firstPointsOfTrips(tripIds, limit))
        byTrip.get(point.trip_id as string)?.push(point);
      return tripIds.map((id) => byTrip.get(id)!);
    });
    context.loaders.tripPoints.set(limit, loader);
  }
  return loader;
}

/** `defaultLocale`: what a user without a preferred locale is shown (GraphQL's session fields are non-null). */
export function createResolvers(services: GraphQLServices, defaultLocale: string) {
  const { devices, trips, gps, locations } = services;
  const scoped = (permission: string) => (context: GraphQLContext) => scopeIn(services, context, permission);
  return {
    Query: {
      me: (_: unknown, __: Args, context: GraphQLContext) => {
        const caller = guard(context, requireAuthenticated({ oauthTokens: true }), true);
        return {
          userId: caller.userId,
          apiKeyId: caller.apiKeyId,
          roles: caller.roles,
          permissions: caller.permissions,
          isSuperAdmin: caller.isSuperAdmin,
        };
      },
      devices: pageOf(scoped('devices:read'), (limit, offset, _, scope) => devices.page(scope, limit, offset)),
      device: async (_: unknown, args: Args, context: GraphQLContext) =>
        devices.get(await scopeIn(services, context, 'devices:read'), uuidArg(args, 'id')),
      trips: pageOf(scoped('trips:read'), (limit, offset, args, scope) =>
        trips.page(scope, limit, offset, args.status as Parameters<typeof trips.page>[3]),
      ),
      trip: async (_: unknown, args: Args, context: GraphQLContext) =>
        trips.get(await scopeIn(services, context, 'trips:read'), uuidArg(args, 'id')),
      gpsPoints: async (_: unknown, args: Args, context: GraphQLContext) => {
        const scope = await scopeIn(services, context, 'gps:read');
        const page = keysetPageOfArgs('gps', args);
        return pointPage(page, await gps.page(scope, page.limit, startOf(page)));
      },
      tripPoints: async (_: unknown, args: Args, context: GraphQLContext) => {
        const scope = await scopeIn(services, context, 'trips:read');
        const tripId = uuidArg(args, 'tripId');
        const page = keysetPageOfArgs(`trip:${tripId}`, args);
        return pointPage(page, { ...(await trips.points(scope, tripId, page.limit, startOf(page))), estimated: false });
      },
      gpsPoint: async (_: unknown, args: Args, context: GraphQLContext) =>
        gps.get(await scopeIn(services, context, 'gps:read'), uuidArg(args, 'id')),
      latestPosition: async (_: unknown, args: Args, context: GraphQLContext) =>
        gps.latestIn(
          await scopeIn(services, context, 'gps:read'),
          args.deviceId == null ? undefined : uuidArg(args, 'deviceId'),
        ),
      latestPositions: async (_: unknown, __: Args, context: GraphQLContext) =>
        gps.latestPerDeviceIn(await scopeIn(services, context, 'gps:read')),
      locations: pageOf('locations:read', (limit, offset) => locations.page(limit, offset)),
      events: async (_: unknown, args: Args, context: GraphQLContext) => {
        const scope = await scopeIn(services, context, 'events:read');
        const page = keysetPageOfArgs('events', args);
        const type = args.type ?? undefined;
        if (type !== undefined && !(EVENT_TYPES as readonly unknown[]).includes(type))
          throw RequestErrors.validation(`Argument 'type' must be one of: ${EVENT_TYPES.join(', ')}`);
        const found = await services.trackingEvents.page(
          scope,
          {
            device_id: args.deviceId == null ? undefined : uuidArg(args, 'deviceId'),
            geofence_id: args.geofenceId == null ? undefined : uuidArg(args, 'geofenceId'),
            type: type as (typeof EVENT_TYPES)[number] | undefined,
            from: timeArg(args, 'from'),
            to: timeArg(args, 'to'),
          },
          page.limit,
          startOf(page),
        );
        return {
          data: found.rows,
          pagination: {
            page: page.page,
            limit: page.limit,
            total: found.total,
            total_pages: totalPagesOf(found.total, page.limit),
          },
          total_estimated: found.estimated,
          next: nextCursor(found, page, keyOfEvent) ?? null,
        };
      },
      mySessions: async (_: unknown, __: Args, context: GraphQLContext) => {
        const caller = guard(context, requireAuthenticated());
        return (await services.sessions.listMine(caller)).sessions;
      },
      apiKeys: (_: unknown, __: Args, context: GraphQLContext) =>
        services.apiKeys.list(guard(context, requirePermission('api_keys:read'))),
      // As GET /v1/integrations: the caller's own, never a token.
      myIntegrations: (_: unknown, __: Args, context: GraphQLContext) =>
        services.integrations.list(userIdOf(guard(context, READ_INTEGRATIONS))),
      myPasskeys: (_: unknown, __: Args, context: GraphQLContext) => services.passkeys.list(sessionOf(context)),
    },

    Mutation: {
      // Anonymous by nature: the temporary token is the credential. (The system key is refused, as on REST.)
      verifyTwoFactorLogin: (_: unknown, args: { input: Args }, context: GraphQLContext) => {
        if (context.caller?.isSystem) throw AuthErrors.system_key_not_permitted();
        return services.twoFactor.verifyLogin(context.request, bodyFrom(checks.verifyLogin, args.input));
      },
      passkeyCreationOptions: (_: unknown, args: Args, context: GraphQLContext) => {
        const { current_password } = bodyFrom<{ current_password?: string }>(checks.passkeyCreationOptions, {
          currentPassword: args.currentPassword ?? undefined,
        });
        return services.passkeys.registrationOptions(context.request, sessionOf(context), current_password);
      },
      registerPasskey: (_: unknown, args: { input: Args }, context: GraphQLContext) => {
        const caller = sessionOf(context);
        return services.passkeys.register(context.request, caller, bodyFrom(checks.registerPasskey, args.input));
      },
      renamePasskey: (_: unknown, args: Args, context: GraphQLContext) => {
        const caller = sessionOf(context);
        const { name } = bodyFrom<{ name: string }>(checks.renamePasskey, { name: args.name });
        return services.passkeys.rename(context.request, caller, uuidArg(args, 'id'), name);
      },
      deletePasskey: async (_: unknown, args: Args, context: GraphQLContext) => {
        await services.passkeys.remove(context.request, sessionOf(context), uuidArg(args, 'id'));
        return true;
      },
      passkeySignInOptions: (_: unknown, args: Args, context: GraphQLContext) => {
        anonymous(context);
        return services.passkeys.signInOptions(
          bodyFrom(checks.passkeySignInOptions, { identifier: args.identifier ?? undefined }),
        );
      },
      signInWithPasskey: (_: unknown, args: Args, context: GraphQLContext) => {
        anonymous(context);
        return services.passkeys.signIn(context.request, bodyFrom(checks.passkeySignIn, { response: args.response }));
      },
      twoFactorPasskeyOptions: (_: unknown, args: Args, context: GraphQLContext) => {
        anonymous(context);
        return services.passkeys.secondFactorOptions(
          bodyFrom<{ temp_token: string }>(checks.passkeySecondFactorOptions, { temp_token: args.tempToken })
            .temp_token,
        );
      },
      verifyTwoFactorLoginWithPasskey: (_: unknown, args: Args, context: GraphQLContext) => {
        anonymous(context);
        return services.passkeys.verifySecondFactor(
          context.request,
          bodyFrom(checks.passkeySecondFactor, { temp_token: args.tempToken, response: args.response }),
        );
      },
      logout: async (_: unknown, __: Args, context: GraphQLContext) => {
        const caller = guard(context, requireAuthenticated());
        if (caller.kind !== 'session')
          throw AuthErrors.forbidden('Only a session can log out; API keys are revoked instead');
        await services.signIn.logoutAllSessions(context.request, caller);
        return true;
      },
      logoutEverywhere: async (_: unknown, args: Args, context: GraphQLContext) => {
        const caller = guard(context, SIGN_OUT_OF_APPS);
        const { reason } = bodyFrom<{ reason?: string }>(checks.logoutEverywhere, { reason: args.reason ?? undefined });
        await services.sessions.logoutEverywhere(context.request, caller, reason);
        return true;
      },
      logoutApp: async (_: unknown, args: Args, context: GraphQLContext) => {
        const caller = guard(context, SIGN_OUT_OF_APPS);
        await services.sessions.logoutApp(context.request, caller, uuidArg(args, 'clientId'));
        return true;
      },
      changePassword: async (_: unknown, args: { input: Args }, context: GraphQLContext) => {
        const caller = guard(context, requireAuthenticated());
        if (caller.kind !== 'session') throw SessionErrors.session_required();
        const { other_sessions_ended } = await services.passwordReset.change(
          context.request,
          caller,
          bodyFrom(checks.changePassword, args.input),
        );
        return { message: PASSWORD_CHANGED_MESSAGE, other_sessions_ended };
      },
      deleteMyAccount: async (_: unknown, args: { input?: Args | null }, context: GraphQLContext) => {
        const { scheduled_deletion_at } = await services.selfDeletion.deleteOwn(
          context.request,
          sessionOf(context),
          bodyFrom(checks.deleteMyAccount, args.input ?? {}),
        );
        return { message: ACCOUNT_DELETION_MESSAGE, scheduled_deletion_at };
      },
      oauthSignin: async (_: unknown, args: { input: Args }, context: GraphQLContext) => {
        // As POST /v1/users/oauth: any other credential is told the system key is needed (401).
        if (!guard(context, requireAuthenticated(), true).isSystem) throw OauthSignInErrors.system_key_only();
        const user = await services.users.oauthSignIn(
          context.request,
          bodyFrom(checks.oauthSignIn, args.input, (name) => name),
        );
        return { user, message: 'Signed in' };
      },
      mintWsTicket: (_: unknown, __: Args, context: GraphQLContext) => {
        const caller = guard(context, requireAuthenticated({ oauthTokens: true }));
        return services.realtime.mintTicket(caller, bearerTokenHash(context.request)!);
      },
      updateDevice: async (_: unknown, args: { id: unknown; input: Args }, context: GraphQLContext) => {
        const scope = await scopeIn(services, context, 'devices:write');
        return devices.update(
          context.caller!,
          scope,
          uuidArg(args, 'id'),
          bodyFrom<Static<typeof UpdateDeviceBody>>(checks.updateDevice, args.input),
        );
      },
      deleteGpsData: async (_: unknown, args: Args, context: GraphQLContext) => {
        await gps.remove(await scopeIn(services, context, 'gps:delete'), uuidArg(args, 'id'));
        return true;
      },
      // The service decides (system key, audit:write, the app assertion for end-user actors), as for POST /v1/internal/audit.
      logAuditEvent: (_: unknown, args: { input: Args }, context: GraphQLContext) => {
        guard(context, requireAuthenticated({ oauthTokens: true }), true);
        return services.audit.ingest(context.request, context.caller, null, bodyFrom(checks.audit, args.input));
      },
    },

    // Nested fields demand what their own REST route does: a trip reader sees the trip's device only with
    // devices:read (or its own scope: then only a device it reaches), and a device's position only with gps:read.
    Trip: {
      device: async (trip: Row, _: Args, context: GraphQLContext) => {
        const scope = await scopeIn(services, context, 'devices:read');
        const deviceId = trip.device_id as string | null;
        if (!deviceId || (!scope.all && !scope.access.seesLive(deviceId))) return null;
        return context.loaders.device.load(deviceId);
      },
      // A self-service reader gets the first points within what it may read of the device (so possibly fewer).
      points: async (trip: Row, args: Args, context: GraphQLContext) => {
        const scope = await scopeIn(services, context, 'trips:read');
        const points = await tripPointsLoader(services, context, args.limit as number).load(trip.id as string);
        if (scope.all) return points;
        return points.filter((point) =>
          scope.access.seesPoint(point.device_id as string, (point.timestamp as Date).getTime()),
        );
      },
    },

    TwoFactorLogin: {
      preferredLocale: (login: Row) => login.preferred_locale ?? defaultLocale,
    },
    SignIn: {
      requires2fa: (login: Row) => login.requires_2fa,
      preferredLocale: (login: Row) => login.preferred_locale ?? defaultLocale,
    },

    // Fields whose GraphQL names are not the camelCase of the REST ones.
    Session: {
      browser: (session: Row) => session.browser_name,
      os: (session: Row) => session.os_name,
    },
    ApiKey: {
      prefix: (key: Row) => key.key_prefix,
    },

    Device: {
      latestPosition: async (device: Row, _: Args, context: GraphQLContext) =>
        gps.latestIn(await scopeIn(services, context, 'gps:read'), device.id as string),
    },
  };
}
