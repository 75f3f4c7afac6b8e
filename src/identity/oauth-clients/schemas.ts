import { Type, type Static } from 'typebox';
import { Body, DateTime, named, Nullable, Uuid } from '../../platform/http/schemas.js';

const WebUrl = (description: string) => Type.String({ maxLength: 2000, pattern: '^https?://[^\\s]+$', description });
// No wildcards: an app is granted named permissions, never everything its user may do.
const Scope = Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9_.:-]+$' });

export const ClientType = Type.Union([Type.Literal('confidential'), Type.Literal('public')], {
  description:
    'confidential: has a secret (server-side apps); public: no secret, PKCE required (browser and native apps)',
});

export const OAuthClient = named(
  'OAuthClient',
  Type.Object(
    {
      id: Uuid,
      name: Type.String(),
      description: Nullable(Type.String()),
      logo_url: Nullable(Type.String()),
      homepage_url: Nullable(Type.String()),
      privacy_policy_url: Nullable(Type.String()),
      terms_of_service_url: Nullable(Type.String()),
      redirect_uris: Type.Array(Type.String()),
      allowed_scopes: Type.Array(Type.String()),
      client_type: ClientType,
      is_active: Type.Boolean(),
      is_first_party: Type.Boolean({ description: 'First-party apps skip the consent screen' }),
      owner_user_id: Nullable(Uuid),
      created_at: DateTime,
      updated_at: DateTime,
    },
    {
      examples: [
        {
          id: '8d7c6b5a-4f3e-4d2c-9b1a-0f9e8d7c6b5a',
          name: 'Harbour log',
          description: 'Logbook for the marina',
          logo_url: null,
          homepage_url: 'https://harbour.example.org',
          privacy_policy_url: null,
          terms_of_service_url: null,
          redirect_uris: ['https://harbour.example.org/callback'],
          allowed_scopes: ['openid', 'profile', 'email', 'gps:read'],
          client_type: 'confidential',
          is_active: true,
          is_first_party: false,
          owner_user_id: '0b8e9f10-1a2b-4c3d-9e4f-5a6b7c8d9e0f',
          created_at: '2026-11-25T09:30:00.000Z',
          updated_at: '2026-11-25T09:30:00.000Z',
        },
      ],
    },
  ),
);

const fields = {
  name: Type.String({ minLength: 1, maxLength: 100 }),
  description: Type.Optional(Nullable(Type.String({ maxLength: 1000 }))),
  logo_url: Type.Optional(Nullable(WebUrl('http(s) URL of the logo shown on the consent page'))),
  homepage_url: Type.Optional(Nullable(WebUrl('http(s) URL'))),
  privacy_policy_url: Type.Optional(Nullable(WebUrl('http(s) URL'))),
  terms_of_service_url: Type.Optional(Nullable(WebUrl('http(s) URL'))),
  redirect_uris: Type.Array(Type.String({ minLength: 1, maxLength: 2000 }), {
    minItems: 1,
    maxItems: 20,
    description:
      'Exact redirect URIs: absolute https, or http on a loopback address (127.0.0.1, [::1], localhost), no fragment',
  }),
  allowed_scopes: Type.Optional(
    Type.Array(Scope, {
      minItems: 1,
      maxItems: 100,
      description:
        'OpenID scopes and permissions (resource:action) the client may ask for; default openid, profile, email',
    }),
  ),
  client_type: Type.Optional(ClientType),
  is_active: Type.Optional(Type.Boolean()),
  is_first_party: Type.Optional(Type.Boolean({ description: 'Super admins only' })),
  owner_user_id: Type.Optional(Uuid),
};

export const CreateClientBody = Body(fields, {
  example: {
    name: 'Fleet dashboard',
    redirect_uris: ['https://fleet.example.org/callback'],
    allowed_scopes: ['openid', 'profile', 'trips:read'],
    client_type: 'confidential',
  },
});
export const UpdateClientBody = Body(
  { ...fields, name: Type.Optional(fields.name), redirect_uris: Type.Optional(fields.redirect_uris) },
  {
    atLeastOne: true,
    example: { description: 'Shows every vehicle on one map', homepage_url: 'https://fleet.example.org' },
  },
);
export type CreateClientInput = Static<typeof CreateClientBody>;
export type UpdateClientInput = Static<typeof UpdateClientBody>;

export const ClientCreated = Type.Object({
  client: Type.Object({ id: Uuid, name: Type.String(), client_type: ClientType, is_active: Type.Boolean() }),
  client_secret: Nullable(Type.String({ description: 'Shown once; null for public clients' })),
});
export const SecretRegenerated = Type.Object({
  client_id: Uuid,
  client_secret: Type.String({ description: 'Shown once' }),
  message: Type.String(),
});
export const ClientList = Type.Object({ data: Type.Array(OAuthClient) });
