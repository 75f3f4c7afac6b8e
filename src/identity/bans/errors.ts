import { defineErrors } from '../../platform/http/errors.js';

export const BanErrors = defineErrors('ban', {
  self: [400, 'You cannot ban yourself'],
  super_admin: [403, 'Only a super admin can ban a super admin'],
  already_banned: [409, 'The user is already banned; lift the ban first to change it'],
  not_banned: [404, 'The user is not banned'],
  user_not_found: [404, 'User not found'],
});

/** Signing in while a ban is in force: the message names the ban's end. */
export const BannedErrors = defineErrors('auth', {
  banned: [403, 'This account is banned'],
});

export function bannedError(ban: { expires_at: Date | null; reason: string | null }) {
  const until = ban.expires_at ? `until ${ban.expires_at.toISOString()}` : 'permanently';
  return BannedErrors.banned(`This account is banned ${until}${ban.reason ? `: ${ban.reason}` : ''}`);
}
