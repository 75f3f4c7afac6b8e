-- credential lookup: the usable key of a hash (active, unexpired, its owner neither deleted nor banned)
select
  "k"."id",
  "k"."key_hash",
  "k"."scopes",
  "k"."is_system",
  "k"."user_id",
  "k"."expires_at"
from
  "api_keys" as "k"
  left join "users" as "u" on "u"."id" = "k"."user_id"
where
  "k"."key_hash" = $1
  and "k"."is_active" = $2
  and (
    "k"."expires_at" is null
    or "k"."expires_at" > $3
  )
  and (
    "k"."user_id" is null
    or "k"."is_system" = $4
    or (
      "u"."deleted_at" is null
      and not exists (
        select
          "b"."id"
        from
          "user_bans" as "b"
        where
          "b"."user_id" = "k"."user_id"
          and "b"."unbanned_at" is null
          and (
            "b"."expires_at" is null
            or "b"."expires_at" > $5
          )
      )
    )
  );
-- parameters: ["a9e1a9e1a9e1a9e1a9e1a9e1a9e1a9e1a9e1a9e1a9e1a9e1a9e1a9e1a9e1a9e1",true,"2026-03-14T12:00:00.000Z",true,"2026-03-14T12:00:00.000Z"]

-- last use of a key (at most once a minute per key and process)
update "api_keys"
set
  "last_used_at" = $1
where
  "id" = $2;
-- parameters: ["2026-03-14T12:00:00.000Z","66666666-6666-4666-8666-666666666666"]
