import { Type } from 'typebox';
import { Body, DateTime, named, Nullable, Uuid } from '../../platform/http/schemas.js';

export const User = named(
  'User',
  Type.Object({
    id: Uuid,
    username: Type.String(),
    primary_platform_account_id: Nullable(Uuid),
    created_at: DateTime,
    updated_at: DateTime,
    last_login_at: Nullable(DateTime),
    deleted_at: Nullable(DateTime),
    privacy_mode: Type.Boolean(),
    avatars_enabled: Type.Boolean(),
    preferred_locale: Nullable(Type.String()),
  }),
);

/** The flatter shape of the email lookup and the OAuth upsert: one platform account's email, avatar and provider. */
export const FlatUser = Type.Object({
  id: Uuid,
  primary_platform_account_id: Nullable(Uuid),
  username: Type.String(),
  email: Nullable(Type.String()),
  avatar_url: Nullable(Type.String()),
  platform: Type.String({ description: 'Provider slug of the account' }),
  created_at: DateTime,
  updated_at: DateTime,
  last_login_at: Nullable(DateTime),
  privacy_mode: Type.Boolean(),
  is_banned: Type.Boolean(),
});

export const Profile = named(
  'Profile',
  Type.Object({
    name: Type.String({ description: 'The username' }),
    display_name: Type.String({ description: "The primary account's name at its provider (else the username)" }),
    picture: Nullable(Type.String({ description: "The primary account's avatar URL; null when avatars are off" })),
    provider: Nullable(
      Type.String({ description: "Your session's sign-in provider when you view yourself, else the primary provider" }),
    ),
    primary_provider: Nullable(Type.String({ description: "The primary account's provider slug" })),
    last_login_at: Nullable(DateTime),
    created_at: DateTime,
    privacy_mode: Type.Boolean(),
    avatars_enabled: Type.Boolean(),
  }),
);

const Username = Type.String({
  maxLength: 100,
  description: '3-30 letters, digits and underscores; stored lower case',
});
const Email = Type.String({ maxLength: 254 });

export const UserListQuery = Type.Object({
  role_id: Type.Optional(Type.String({ maxLength: 70, description: 'Only users holding this role' })),
  deleted: Type.Optional(
    Type.Boolean({
      default: false,
      description:
        'true: only deleted users still in the 7-day grace period (to restore with cancel-deletion or remove with force-delete), oldest first',
    }),
  ),
});

export const UpdateUserBody = Body(
  {
    username: Type.Optional(Username),
    email: Type.Optional(
      Type.String({ maxLength: 254, description: "Another user's email (users:write), or your own as a super admin" }),
    ),
    avatar_url: Type.Optional(
      Nullable(Type.String({ maxLength: 2048, description: 'http(s) URL; set on the primary account' })),
    ),
    privacy_mode: Type.Optional(Type.Boolean()),
    avatars_enabled: Type.Optional(Type.Boolean({ description: 'false removes the avatar URLs of all your accounts' })),
  },
  { atLeastOne: true, example: { username: 'ada', privacy_mode: true } },
);

export const LocaleBody = Body(
  { locale: Nullable(Type.String({ maxLength: 35, description: 'One of SUPPORTED_LOCALES; null clears' })) },
  { example: { locale: 'de-DE' } },
);
export const UsernameBody = Body({ username: Username }, { example: { username: 'ada_lovelace' } });
export const EmailBody = Body({ email: Email }, { example: { email: 'ada@example.org' } });
export const TokenBody = Body(
  { token: Type.String({ minLength: 1, maxLength: 200 }) },
  { example: { token: 'emc_4f9d2c7a1b8e4d3f9a6c5b2e1d0f7a8c' } },
);
export const EmailParams = Type.Object({ email: Type.String({ maxLength: 254 }) });

/** A confirmation link went out by mail (an email change here, an email sign-in link in accounts.ts). */
export const LinkMailed = Type.Object({ message: Type.String(), expires_at: DateTime });
export const PendingEmailChange = Type.Object({
  pending: Type.Boolean(),
  new_email: Nullable(Type.String()),
  expires_at: Nullable(DateTime),
});

export const OAuthSignInBody = Body(
  {
    email: Type.Optional(Nullable(Email)),
    name: Type.String({ minLength: 1, maxLength: 200 }),
    oauthProvider: Type.String({ minLength: 1, maxLength: 60, description: 'Provider slug' }),
    oauthProviderId: Type.String({ minLength: 1, maxLength: 255, description: "The user's id at the provider" }),
    image: Type.Optional(Nullable(Type.String({ maxLength: 2048 }))),
  },
  {
    example: {
      email: 'ada@example.org',
      name: 'Ada Lovelace',
      oauthProvider: 'discord',
      oauthProviderId: '80351110224678912',
    },
  },
);

export const DeletionStatus = named(
  'DeletionStatus',
  Type.Object(
    {
      is_scheduled_for_deletion: Type.Boolean({
        description: 'Deleted and waiting for the purge; cancel-deletion restores the user until then',
      }),
      scheduled_deletion_at: Nullable(DateTime),
      is_deleted: Type.Boolean({ description: 'Soft-deleted (deleted_at set)' }),
      deleted_at: Nullable(DateTime),
    },
    {
      examples: [
        {
          is_scheduled_for_deletion: true,
          scheduled_deletion_at: '2026-12-02T09:30:00.000Z',
          is_deleted: true,
          deleted_at: '2026-11-25T09:30:00.000Z',
        },
      ],
    },
  ),
);
export const ForceDeleteBody = Body(
  { reason: Type.String({ minLength: 1, maxLength: 1000, description: 'Why; kept in the user_deleted audit event' }) },
  { example: { reason: 'Deletion requested by the user in support ticket 4711' } },
);

/** A user's sign-in accounts (table platform_accounts) and adding email sign-in to a user (users/accounts.ts). */
export const PlatformAccount = named(
  'PlatformAccount',
  Type.Object({
    id: Uuid,
    platform_id: Uuid,
    platform_name: Type.String(),
    platform_slug: Type.String(),
    platform_user_id: Type.String({ description: "The user's id on the platform; for the email platform the address" }),
    is_oauth: Type.Boolean(),
    is_primary: Type.Boolean(),
    username: Nullable(Type.String()),
    email: Nullable(Type.String()),
    avatar_url: Nullable(Type.String()),
    created_at: DateTime,
    updated_at: DateTime,
  }),
);

export const AccountParams = Type.Object({ id: Uuid, account_id: Uuid });

export const EmailLinkRequestBody = Body(
  {
    email: Type.String({ minLength: 1, maxLength: 254 }),
    password: Type.String({
      minLength: 8,
      maxLength: 1024,
      description: 'Password of the new email sign-in; at least 8 characters',
    }),
  },
  { example: { email: 'ada@example.org', password: 'correct-horse-battery' } },
);

export const EmailLinkTokenBody = Body(
  { token: Type.String({ minLength: 1, maxLength: 512 }) },
  { example: { token: 'elt_4f9d2c7a1b8e4d3f9a6c5b2e1d0f7a8c' } },
);

export const EmailLinked = Type.Object({ message: Type.String(), platform_account_id: Uuid });

export const PendingEmailLink = Type.Object({
  pending: Type.Boolean(),
  email: Nullable(Type.String()),
  expires_at: Nullable(DateTime),
});
