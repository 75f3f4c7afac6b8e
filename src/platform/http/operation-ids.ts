/**
 * Stable `operationId`s, the method names generated clients get: derived from the method and the
 * path (`GET /v1/trips` → `listTrips`, `POST /v1/trips` → `createTrip`, `PATCH /v1/trips/{id}` →
 * `updateTrip`, `POST /v1/api-keys/{id}/regenerate` → `regenerateApiKey`), or named here where the
 * derivation reads badly. Once released, an id never changes: clients' code calls it by name.
 */
const NAMED: Record<string, string> = {
  'GET /health': 'getHealth',
  'GET /v1/health': 'getHealthV1',
  'GET /v1': 'getServerInfo',
  'POST /v1/auth/login': 'login',
  'POST /v1/auth/logout': 'logout',
  'POST /v1/auth/logout-everywhere': 'logoutEverywhere',
  'POST /v1/auth/logout-app': 'logoutApp',
  'POST /v1/auth/register': 'register',
  'POST /v1/auth/register/verify': 'verifyRegistration',
  'POST /v1/auth/verify-email': 'verifyEmail',
  'POST /v1/auth/reset-password': 'requestPasswordReset',
  'POST /v1/auth/reset-password/complete': 'completePasswordReset',
  'POST /v1/auth/signin': 'signIn',
  'POST /v1/auth/validate': 'validateToken',
  'POST /v1/auth/2fa/verify': 'verifyTwoFactorLogin',
  'POST /v1/auth/2fa/check': 'checkTwoFactor',
  'POST /v1/roles/{id}/permissions': 'addRolePermission',
  'DELETE /v1/roles/{id}/permissions/{permission_id}': 'removeRolePermission',
  'POST /v1/users/{id}/roles': 'assignUserRole',
  'DELETE /v1/users/{id}/roles/{role_id}': 'removeUserRole',
  'POST /v1/api-keys/{id}/roles': 'assignApiKeyRole',
  'DELETE /v1/api-keys/{id}/roles/{role_id}': 'removeApiKeyRole',
  'GET /v1/users/me': 'getCurrentUser',
  'GET /v1/users/email/{email}': 'getUserByEmail',
  'POST /v1/users/oauth': 'upsertSocialUser',
  'POST /v1/users/{id}/email/request-change': 'requestEmailChange',
  'POST /v1/users/email/verify': 'verifyEmailChange',
  'GET /v1/users/{id}/email/pending': 'getPendingEmailChange',
  'DELETE /v1/users/{id}/email/pending': 'cancelEmailChange',
  'POST /v1/users/{id}/email-link/request': 'requestEmailLink',
  'POST /v1/users/email-link/verify': 'verifyEmailLink',
  'GET /v1/users/{id}/email-link/pending': 'getPendingEmailLink',
  'DELETE /v1/users/{id}/email-link/pending': 'cancelEmailLink',
  'PUT /v1/users/{id}/accounts/{account_id}/primary': 'setPrimaryUserAccount',
  'GET /v1/users/me/sessions': 'listMySessions',
  'DELETE /v1/users/me/sessions': 'deleteMyOtherSessions',
  'DELETE /v1/users/me/sessions/{session_id}': 'deleteMySession',
  'GET /v1/users/me/2fa/status': 'getTwoFactorStatus',
  'GET /v1/users/me/2fa/requirement': 'getTwoFactorRequirement',
  'POST /v1/users/me/2fa/setup': 'setUpTwoFactor',
  'POST /v1/users/me/2fa/verify': 'confirmTwoFactorSetup',
  'DELETE /v1/users/me/2fa': 'disableTwoFactor',
  'POST /v1/users/me/2fa/backup-codes/regenerate': 'regenerateBackupCodes',
  'GET /v1/users/me/preferences': 'getMyPreferences',
  'PATCH /v1/users/me/preferences': 'updateMyPreferences',
  'GET /v1/users/me/audit': 'listMyAuditEvents',
  'GET /v1/users/{user_id}/audit': 'listUserAuditEvents',
  'GET /v1/admin/audit': 'listAuditEvents',
  'POST /v1/users/me/audit/{event_id}/report': 'reportAuditEvent',
  'GET /v1/users/me/audit/reports': 'listMyAuditReports',
  'GET /v1/admin/audit/reports': 'listAuditReports',
  'PATCH /v1/admin/audit/reports/{report_id}': 'updateAuditReport',
  'POST /v1/internal/audit': 'recordAuditEvent',
  'DELETE /v1/users/{id}/ban': 'unbanUser',
  'GET /v1/admin/users/{id}/deletion-status': 'getUserDeletionStatus',
  'POST /v1/admin/users/{id}/cancel-deletion': 'cancelUserDeletion',
  'POST /v1/admin/users/{id}/force-delete': 'forceDeleteUser',
  'GET /v1/user/export': 'exportMyData',
  'GET /v1/user/export/logs': 'listMyExportLogs',
  'POST /v1/devices/{id}/key': 'replaceDeviceKey',
  'GET /v1/gps': 'listGpsPoints',
  'DELETE /v1/gps/imports/{id}/points': 'removeGpsImportPoints',
  'POST /v1/gps': 'createGpsPoint',
  'GET /v1/gps/{id}': 'getGpsPoint',
  'DELETE /v1/gps/{id}': 'deleteGpsPoint',
  'GET /v1/gps/current': 'getCurrentPosition',
  'GET /v1/gps/current/devices': 'listCurrentDevicePositions',
  'GET /v1/trips/{id}/gps': 'listTripGpsPoints',
  'GET /v1/trips/{id}/history': 'listTripHistory',
  'POST /v1/trip-templates/{id}/create-trip': 'createTripFromTemplate',
  'GET /v1/settings/public': 'listPublicSettings',
  'GET /v1/system-config': 'listSystemConfig',
  'GET /v1/system-config/{key}': 'getSystemConfig',
  'GET /v1/stats/public': 'getPublicStats',
  'GET /v1/platforms/enabled': 'listEnabledPlatforms',
  'PATCH /v1/platforms/{id_or_slug}/enabled': 'setPlatformEnabled',
  'GET /v1/integrations/platforms': 'listIntegrationPlatforms',
  'GET /v1/integrations/platform/{slug}': 'getIntegrationPlatform',
  'GET /v1/integrations/platform/{slug}/scopes': 'listIntegrationPlatformScopes',
  'POST /v1/integrations/platform/{slug}/connect': 'connectIntegration',
  'GET /v1/integrations/callback/{platform}': 'completeIntegrationConnect',
  'POST /v1/integrations/{id}/stats': 'readIntegrationStats',
  'GET /v1/oauth/clients/all': 'listAllOAuthClients',
  'POST /v1/oauth/clients/{id}/regenerate-secret': 'regenerateOAuthClientSecret',
  'GET /v1/oauth/.well-known/openid-configuration': 'getOpenIdConfiguration',
  'GET /.well-known/oauth-authorization-server/v1/oauth': 'getOAuthServerMetadata',
  'GET /v1/oauth/jwks': 'getJsonWebKeySet',
  'GET /v1/oauth/authorize': 'authorize',
  'POST /v1/oauth/authorize': 'authorizeByForm',
  'GET /v1/oauth/authorize/{uid}': 'resumeAuthorization',
  'GET /v1/oauth/userinfo': 'getUserInfo',
  'POST /v1/oauth/userinfo': 'postUserInfo',
  'POST /v1/oauth/revoke': 'revokeOAuthConsent',
  'POST /v1/oauth/token': 'requestOAuthToken',
  'POST /v1/oauth/token/introspection': 'introspectOAuthToken',
  'POST /v1/oauth/token/revocation': 'revokeOAuthToken',
  'POST /v1/oauth/interaction/{uid}/two-factor': 'verifyOAuthInteractionTwoFactor',
  'POST /v1/oauth/interaction/{uid}/handoff': 'handOffOAuthSignIn',
  'GET /v1/oauth/interaction/{uid}/complete': 'completeOAuthSignInHandoff',
  'GET /v1/gql': 'queryGraphqlByGet',
  'POST /v1/gql': 'queryGraphql',
  'GET /v1/community/guilds/{guild_id}/full': 'getCommunityGuildWithChannels',
  'GET /v1/community/settings': 'getCommunitySettings',
  'GET /v1/community/guilds/{guild_id}/settings': 'getCommunityGuildSettings',
  'POST /v1/ws/ticket': 'createWebSocketTicket',
  'GET /v1/ws': 'openWebSocket',
};

/** Words spelt as people write them. */
const WORDS: Record<string, string> = { oauth: 'OAuth', '2fa': 'TwoFactor', gql: 'GraphQL' };

const VERBS: Record<string, string> = { get: 'get', post: 'create', put: 'set', patch: 'update', delete: 'delete' };

export function operationIdFor(method: string, path: string): string {
  const named = NAMED[`${method.toUpperCase()} ${path}`];
  if (named) return named;
  const segments = path
    .replace(/^\/v1(?=\/|$)/, '')
    .split('/')
    .filter(Boolean);
  const words: string[] = [];
  segments.forEach((segment, i) => {
    if (segment.startsWith('{')) return;
    const word = pascal(segment);
    words.push(segments[i + 1]?.startsWith('{') ? singular(word) : word);
  });
  const last = segments.at(-1) ?? '';
  const endsInCollection = !last.startsWith('{') && last.endsWith('s') && !last.endsWith('ss');
  const verb = method.toLowerCase();
  if (verb === 'get') return `${endsInCollection ? 'list' : 'get'}${words.join('')}`;
  if (verb === 'post' && !last.startsWith('{') && !endsInCollection && words.length > 1) {
    // An action on a resource: `POST /api-keys/{id}/regenerate` → regenerateApiKey.
    return `${camel(words.at(-1)!)}${words.slice(0, -1).join('')}`;
  }
  if (verb === 'post' && endsInCollection) words[words.length - 1] = singular(words.at(-1)!);
  return `${VERBS[verb] ?? verb}${words.join('')}`;
}

const pascal = (segment: string) =>
  segment
    .split(/[-_.]/)
    .filter(Boolean)
    .map((part) => WORDS[part] ?? part[0]!.toUpperCase() + part.slice(1))
    .join('');

const camel = (word: string) => word[0]!.toLowerCase() + word.slice(1);

function singular(word: string): string {
  if (word.endsWith('ies')) return `${word.slice(0, -3)}y`;
  if (word.endsWith('ss') || !word.endsWith('s')) return word;
  return word.slice(0, -1);
}
