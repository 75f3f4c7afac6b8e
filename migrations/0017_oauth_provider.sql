-- The OAuth / OpenID Connect provider's state. Artifacts (access and refresh tokens, codes, grants,
-- interactions) are oidc-provider's payloads by model and id, with the columns its lookups need; the
-- signing keys are private JWKs sealed with the secret box, kept after retirement until no token
-- they signed can still be valid.
create table oauth_artifacts (
  model text not null,
  id text not null,
  payload jsonb not null,
  grant_id text,
  uid text,
  user_code text,
  expires_at timestamptz,
  consumed_at timestamptz,
  primary key (model, id)
);
create index oauth_artifacts_grant on oauth_artifacts (grant_id) where grant_id is not null;
create index oauth_artifacts_uid on oauth_artifacts (uid) where uid is not null;
create index oauth_artifacts_expiry on oauth_artifacts (expires_at) where expires_at is not null;

create table oauth_signing_keys (
  kid text primary key,
  algorithm text not null,
  private_jwk_sealed text not null,
  created_at timestamptz not null default now(),
  retired_at timestamptz
);
