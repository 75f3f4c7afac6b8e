/** Who is making a request, as resolved from its bearer credential. */
export interface Caller {
  kind: 'session' | 'api_key' | 'oauth_token';
  userId: string | null;
  apiKeyId: string | null;
  sessionId: string | null;
  /** Effective permissions: key scopes and role permissions, or the user's role permissions. */
  permissions: string[];
  roles: string[];
  isSystem: boolean;
  isSuperAdmin: boolean;
  /** Login provider slug of a session. */
  provider: string | null;
  /** Epoch ms after which the credential is no longer valid; null when it never expires. */
  expiresAt: number | null;
  /**
   * An API key never does more than its owner may do now: the owner's current permissions,
   * or null when there is no limit (owner is a super admin, system keys, sessions).
   */
  ownerPermissions: string[] | null;
}

/**
 * Whether one held permission covers a requested one. `*` in the held
 * permission matches anything in that position; a requested wildcard is only
 * covered by a held wildcard in the same position (`gps:read` does not cover `gps:*`).
 */
export function covers(held: string, requested: string): boolean {
  const [heldResource, heldAction] = splitPermission(held);
  const [resource, action] = splitPermission(requested);
  return (heldResource === '*' || heldResource === resource) && (heldAction === '*' || heldAction === action);
}

/** A held permission list made fast to ask: its exact permissions in a set, the wildcard ones apart. */
interface PermissionIndex {
  exact: ReadonlySet<string>;
  wildcards: readonly string[];
}

/**
 * Each list indexed once, on its first check: a caller's lists live as long as its cached credential and are
 * asked several times per request (the route's permission, then a scope's `_own` one). No code changes a
 * caller's list once made (they are built anew when roles change), so the index cannot go stale.
 */
const indexes = new WeakMap<readonly string[], PermissionIndex>();

function indexOf(held: readonly string[]): PermissionIndex {
  let index = indexes.get(held);
  if (!index) {
    index = {
      exact: new Set(held.filter((permission) => !permission.includes('*'))),
      wildcards: held.filter((permission) => permission.includes('*')),
    };
    indexes.set(held, index);
  }
  return index;
}

export function grants(held: readonly string[], requested: string): boolean {
  const index = indexOf(held);
  // A held permission without a wildcard covers only itself.
  if (index.exact.has(requested)) return true;
  return index.wildcards.some((permission) => covers(permission, requested));
}

/** Super admins and system keys hold everything; everybody else what their permissions (and a key's owner's) cover. */
export function hasPermission(caller: Caller, permission: string): boolean {
  if (caller.isSuperAdmin || caller.isSystem) return true;
  return (
    grants(caller.permissions, permission) &&
    (caller.ownerPermissions === null || grants(caller.ownerPermissions, permission))
  );
}

/**
 * Permissions that act on the holder's own account only (their OAuth clients, activity log, data export,
 * integrations, connected apps, API keys, groups, own devices): every user holds them through the default role, and holding them gives no
 * power over anyone else, so they do not count when judging whether a caller may manage another user.
 */
export const OWN_ACCOUNT_ONLY: ReadonlySet<string> = new Set([
  'oauth_clients:read',
  'oauth_clients:write',
  'oauth_clients:delete',
  'audit:read_own',
  'audit:report_own',
  'export:read',
  'integrations:read',
  'integrations:write',
  'connected_apps:sign_out',
  'connected_apps:read',
  'connected_apps:revoke',
  // How the console shows units, times and coordinates to the user (issue 49).
  'preferences:read',
  'preferences:write',
  // One's own notification channels and rules (issue 44): they only ever tell the user about what they may see.
  'notifications:read',
  'notifications:write',
  // One's own API keys (issue 43: a user's phone reports with one); only super admins reach other users' keys.
  'api_keys:read',
  'api_keys:write',
  'api_keys:delete',
  // Groups a user belongs to (issue 43): an admin of a group has power over its members only within it.
  'groups:read',
  'groups:write',
  // Self-service tracking (issue 43): one's own devices and those shared with one, nobody else's.
  'gps:read_own',
  'gps:write_own',
  'gps:delete_own',
  'devices:read_own',
  'devices:write_own',
  'devices:delete_own',
  'trips:read_own',
  'trips:write_own',
  'trips:delete_own',
  'geofences:read_own',
  'geofences:write_own',
  'geofences:delete_own',
  'events:read_own',
]);

export const PERMISSION_PATTERN = '^([a-z][a-z0-9_]*|\\*):([a-z][a-z0-9_.]*|\\*)$';

function splitPermission(permission: string): [string, string] {
  const colon = permission.indexOf(':');
  return colon < 0 ? [permission, ''] : [permission.slice(0, colon), permission.slice(colon + 1)];
}
