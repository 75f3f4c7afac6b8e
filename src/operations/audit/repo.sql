-- write: an event of a request
insert into
  "audit_events" (
    "event_type",
    "user_id",
    "actor_id",
    "resource_type",
    "resource_id",
    "description",
    "metadata",
    "status",
    "error_message",
    "source_service",
    "ip_address",
    "user_agent",
    "country_code",
    "country_name",
    "city",
    "region"
  )
values
  (
    $1,
    $2,
    $3,
    $4,
    $5,
    $6,
    $7,
    $8,
    $9,
    $10,
    $11,
    $12,
    $13,
    $14,
    $15,
    $16
  )
returning
  *;
-- parameters: ["user_updated","44444444-4444-4444-8444-444444444444","77777777-7777-4777-8777-777777777777","user","44444444-4444-4444-8444-444444444444",null,"{\"fields\":[\"email\"]}","success",null,"api","203.0.113.7","Snapshot/1.0",null,null,null,null]

-- page: the newest events
select
  "audit_events"."id",
  "audit_events"."user_id",
  "audit_events"."event_type",
  "audit_events"."resource_type",
  "audit_events"."resource_id",
  "audit_events"."actor_id",
  "audit_events"."ip_address",
  "audit_events"."user_agent",
  "audit_events"."description",
  "audit_events"."metadata",
  "audit_events"."status",
  "audit_events"."error_message",
  "audit_events"."country_code",
  "audit_events"."country_name",
  "audit_events"."city",
  "audit_events"."region",
  "audit_events"."source_service",
  "audit_events"."created_at",
  exists (
    select
      1 as "one"
    from
      "audit_reports"
    where
      "audit_reports"."audit_event_id" = "audit_events"."id"
  ) as "is_reported"
from
  "audit_events"
order by
  "audit_events"."created_at" desc,
  "audit_events"."id" desc
limit
  $1
offset
  $2;
-- parameters: [50,0]

-- page: a user's own activity
select
  "audit_events"."id",
  "audit_events"."user_id",
  "audit_events"."event_type",
  "audit_events"."resource_type",
  "audit_events"."resource_id",
  "audit_events"."actor_id",
  "audit_events"."ip_address",
  "audit_events"."user_agent",
  "audit_events"."description",
  "audit_events"."metadata",
  "audit_events"."status",
  "audit_events"."error_message",
  "audit_events"."country_code",
  "audit_events"."country_name",
  "audit_events"."city",
  "audit_events"."region",
  "audit_events"."source_service",
  "audit_events"."created_at",
  exists (
    select
      1 as "one"
    from
      "audit_reports"
    where
      "audit_reports"."audit_event_id" = "audit_events"."id"
  ) as "is_reported"
from
  "audit_events"
where
  "audit_events"."user_id" in ($1)
order by
  "audit_events"."created_at" desc,
  "audit_events"."id" desc
limit
  $2
offset
  $3;
-- parameters: ["44444444-4444-4444-8444-444444444444",50,100]

-- page: every filter, by event type
select
  "audit_events"."id",
  "audit_events"."user_id",
  "audit_events"."event_type",
  "audit_events"."resource_type",
  "audit_events"."resource_id",
  "audit_events"."actor_id",
  "audit_events"."ip_address",
  "audit_events"."user_agent",
  "audit_events"."description",
  "audit_events"."metadata",
  "audit_events"."status",
  "audit_events"."error_message",
  "audit_events"."country_code",
  "audit_events"."country_name",
  "audit_events"."city",
  "audit_events"."region",
  "audit_events"."source_service",
  "audit_events"."created_at",
  exists (
    select
      1 as "one"
    from
      "audit_reports"
    where
      "audit_reports"."audit_event_id" = "audit_events"."id"
  ) as "is_reported"
from
  "audit_events"
where
  "audit_events"."user_id" in ($1, $2)
  and "audit_events"."event_type" = $3
  and "audit_events"."resource_type" = $4
  and "audit_events"."status" = $5
  and "audit_events"."source_service" = $6
  and "audit_events"."created_at" >= $7
  and "audit_events"."created_at" <= $8
  and exists (
    select
      1 as "one"
    from
      "audit_reports"
    where
      "audit_reports"."audit_event_id" = "audit_events"."id"
  )
order by
  "audit_events"."event_type" asc,
  "audit_events"."created_at" asc,
  "audit_events"."id" asc
limit
  $9
offset
  $10;
-- parameters: ["44444444-4444-4444-8444-444444444444","77777777-7777-4777-8777-777777777777","user_login","session","failure","api","2026-03-01T00:00:00.000Z","2026-03-14T12:00:00.000Z",50,0]

-- page: events without a report
select
  "audit_events"."id",
  "audit_events"."user_id",
  "audit_events"."event_type",
  "audit_events"."resource_type",
  "audit_events"."resource_id",
  "audit_events"."actor_id",
  "audit_events"."ip_address",
  "audit_events"."user_agent",
  "audit_events"."description",
  "audit_events"."metadata",
  "audit_events"."status",
  "audit_events"."error_message",
  "audit_events"."country_code",
  "audit_events"."country_name",
  "audit_events"."city",
  "audit_events"."region",
  "audit_events"."source_service",
  "audit_events"."created_at",
  exists (
    select
      1 as "one"
    from
      "audit_reports"
    where
      "audit_reports"."audit_event_id" = "audit_events"."id"
  ) as "is_reported"
from
  "audit_events"
where
  not exists (
    select
      1 as "one"
    from
      "audit_reports"
    where
      "audit_reports"."audit_event_id" = "audit_events"."id"
  )
order by
  "audit_events"."created_at" desc,
  "audit_events"."id" desc
limit
  $1
offset
  $2;
-- parameters: [50,0]

-- page: no user (an empty list of users matches nothing)
select
  "audit_events"."id",
  "audit_events"."user_id",
  "audit_events"."event_type",
  "audit_events"."resource_type",
  "audit_events"."resource_id",
  "audit_events"."actor_id",
  "audit_events"."ip_address",
  "audit_events"."user_agent",
  "audit_events"."description",
  "audit_events"."metadata",
  "audit_events"."status",
  "audit_events"."error_message",
  "audit_events"."country_code",
  "audit_events"."country_name",
  "audit_events"."city",
  "audit_events"."region",
  "audit_events"."source_service",
  "audit_events"."created_at",
  exists (
    select
      1 as "one"
    from
      "audit_reports"
    where
      "audit_reports"."audit_event_id" = "audit_events"."id"
  ) as "is_reported"
from
  "audit_events"
where
  false
order by
  "audit_events"."created_at" desc,
  "audit_events"."id" desc
limit
  $1
offset
  $2;
-- parameters: [50,0]

-- count: every filter
select
  count(*) as n
from
  (
    (
      select
        1 as "one"
      from
        "audit_events"
      where
        "audit_events"."user_id" in ($1, $2)
        and "audit_events"."event_type" = $3
        and "audit_events"."resource_type" = $4
        and "audit_events"."status" = $5
        and "audit_events"."source_service" = $6
        and "audit_events"."created_at" >= $7
        and "audit_events"."created_at" <= $8
        and exists (
          select
            1 as "one"
          from
            "audit_reports"
          where
            "audit_reports"."audit_event_id" = "audit_events"."id"
        )
      limit
        $9
    )
  ) as capped;
-- parameters: ["44444444-4444-4444-8444-444444444444","77777777-7777-4777-8777-777777777777","user_login","session","failure","api","2026-03-01T00:00:00.000Z","2026-03-14T12:00:00.000Z",10001]

-- reports: file a report on an event of the user
insert into
  "audit_reports" (
    "audit_event_id",
    "audit_event_created_at",
    "user_id",
    "reason",
    "description"
  )
select
  "id",
  "created_at",
  cast($1 as uuid) as "user_id",
  $2 as "reason",
  $3 as "description"
from
  "audit_events"
where
  "id" = $4
  and "user_id" = $5
returning
  "id",
  "audit_event_id",
  "user_id",
  "reason",
  "description",
  "status",
  "reviewed_by",
  "reviewed_at",
  "resolution_notes",
  "created_at",
  "updated_at";
-- parameters: ["44444444-4444-4444-8444-444444444444","not_me","I was asleep","88888888-8888-4888-8888-888888888888","44444444-4444-4444-8444-444444444444"]

-- reports: of a user
select
  "id",
  "audit_event_id",
  "user_id",
  "reason",
  "description",
  "status",
  "reviewed_by",
  "reviewed_at",
  "resolution_notes",
  "created_at",
  "updated_at"
from
  "audit_reports"
where
  "user_id" = $1
order by
  "created_at" desc,
  "id";
-- parameters: ["44444444-4444-4444-8444-444444444444"]

-- reports: pending, a page
select
  "id",
  "audit_event_id",
  "user_id",
  "reason",
  "description",
  "status",
  "reviewed_by",
  "reviewed_at",
  "resolution_notes",
  "created_at",
  "updated_at"
from
  "audit_reports"
where
  "status" = $1
order by
  "created_at" desc,
  "id"
limit
  $2
offset
  $3;
-- parameters: ["pending",20,40]

-- reports: the event a report names
select
  "audit_events"."event_type",
  "audit_events"."created_at"
from
  "audit_reports"
  inner join "audit_events" on "audit_events"."id" = "audit_reports"."audit_event_id"
  and "audit_events"."created_at" = "audit_reports"."audit_event_created_at"
where
  "audit_reports"."id" = $1;
-- parameters: ["99999999-9999-4999-8999-999999999999"]

-- reports: review
update "audit_reports"
set
  "status" = $1,
  "resolution_notes" = $2,
  "reviewed_by" = $3,
  "reviewed_at" = $4,
  "updated_at" = $5
where
  "id" = $6
returning
  "id",
  "audit_event_id",
  "user_id",
  "reason",
  "description",
  "status",
  "reviewed_by",
  "reviewed_at",
  "resolution_notes",
  "created_at",
  "updated_at";
-- parameters: ["resolved","confirmed","77777777-7777-4777-8777-777777777777","2026-03-14T12:00:00.000Z","2026-03-14T12:00:00.000Z","99999999-9999-4999-8999-999999999999"]

-- pseudonymise the events of or by a user
update "audit_events"
set
  "ip_address" = $1,
  "user_agent" = $2,
  "country_code" = $3,
  "country_name" = $4,
  "city" = $5,
  "region" = $6
where
  (
    "user_id" = $7
    or "actor_id" = $8
  )
returning
  "id";
-- parameters: [null,null,null,null,null,null,"44444444-4444-4444-8444-444444444444","44444444-4444-4444-8444-444444444444"]

-- add the monthly partitions (1 of 3)
begin;
-- parameters: []

-- add the monthly partitions (2 of 3)
select
  audit_events_extend ($1) as added;
-- parameters: ["2026-06-01T00:00:00.000Z"]

-- add the monthly partitions (3 of 3)
commit;
-- parameters: []

-- expire events before a cutoff (1 of 3)
begin;
-- parameters: []

-- expire events before a cutoff (2 of 3)
select
  *
from
  audit_events_expire ($1);
-- parameters: ["2026-03-01T00:00:00.000Z"]

-- expire events before a cutoff (3 of 3)
commit;
-- parameters: []
