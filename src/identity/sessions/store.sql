-- credential lookup: the live session of a token hash, its user neither deleted nor banned
select
  "s"."id",
  "s"."token_hash",
  "s"."user_id",
  "s"."provider",
  "s"."expires_at",
  "s"."created_at"
from
  "sessions" as "s"
  inner join "users" as "u" on "u"."id" = "s"."user_id"
where
  "s"."token_hash" = $1
  and "s"."expires_at" > $2
  and "u"."deleted_at" is null
  and not exists (
    select
      "b"."id"
    from
      "user_bans" as "b"
    where
      "b"."user_id" = "u"."id"
      and "b"."unbanned_at" is null
      and (
        "b"."expires_at" is null
        or "b"."expires_at" > $3
      )
  );
-- parameters: ["5e55105e55105e55105e55105e55105e55105e55105e55105e55105e55105e55","2026-03-14T12:00:00.000Z","2026-03-14T12:00:00.000Z"]
