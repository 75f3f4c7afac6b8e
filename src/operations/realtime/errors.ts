import { defineErrors } from '../../platform/http/errors.js';

export const RealtimeErrors = defineErrors('ws', {
  user_context_required: [
    403,
    'A WebSocket ticket needs a user session or OAuth access token; API keys connect with Authorization: Bearer',
  ],
  ticket_invalid: [401, 'The WebSocket ticket is unknown, expired or already used'],
  ticket_missing: [400, 'The service-ticket subprotocol must be followed by the ticket'],
  user_not_found: [404, 'No active user with that userId'],
  relay_requires_system_key: [403, 'Only the system key may relay a user with ?userId='],
  node_full: [503, 'This node holds as many WebSocket connections as it can; try again shortly or another node'],
  too_many_from_address: [429, 'Too many anonymous WebSocket connections from this address'],
  upgrade_required: [426, 'This endpoint speaks WebSocket only: send an Upgrade request'],
});
