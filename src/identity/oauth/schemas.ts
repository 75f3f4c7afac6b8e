import { Type } from 'typebox';
import { DateTime, named, Nullable, Uuid } from '../../platform/http/schemas.js';

/** A client that holds a grant or a consent of the caller (GET /v1/users/me/connected-apps). */
export const ConnectedApp = named(
  'ConnectedApp',
  Type.Object({
    client_id: Uuid,
    client_name: Nullable(Type.String({ description: 'null once the client is deactivated or deleted' })),
    is_first_party: Type.Boolean({ description: 'First-party apps are authorized without a consent page' }),
    scopes: Type.Array(Type.String(), {
      description: 'What you allowed it (consent) and what its grants hold, sorted',
    }),
    consented_at: Nullable(DateTime),
    last_used_at: Nullable(
      Type.Unsafe<Date | string>({
        ...DateTime,
        description: 'When it last got a token for you (a sign-in or a refresh); null when none of its tokens is left',
      }),
    ),
  }),
);

export const ConnectedAppList = Type.Object({ data: Type.Array(ConnectedApp) });

export const ClientIdParams = Type.Object({ client_id: Uuid });
