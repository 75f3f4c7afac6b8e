import { defineErrors } from '../../platform/http/errors.js';

export const CommunityErrors = defineErrors('community', {
  guild_not_found: [404, 'Guild not found'],
  member_not_found: [404, 'Member not found'],
  filters_conflict: [400, 'bot_only and humans_only cannot both be true'],
});
