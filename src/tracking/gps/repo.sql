-- insert of a point with every field (prepared, built once per set of columns)
with
  "logging_trip" as materialized (
    select
      "device_id"."device_id" as "device_id",
      (
        select
          "trip"."id"
        from
          (
            select
              "id"
            from
              "trips"
            where
              "device_id" = "device_id"."device_id"
              and "status" = $1
              and "gps_logging_enabled" = $2
            for no key update
          ) as "trip"
      ) as "trip_id"
    from
      unnest($3::uuid[]) as "device_id"
  ),
  "inserted" as (
    insert into
      "gps_points" (
        "id",
        "device_id",
        "latitude",
        "longitude",
        "altitude",
        "heading",
        "timestamp",
        "speed_kmh",
        "speed_mps",
        "speed_mph",
        "speed_knots",
        "pdop",
        "hdop",
        "vdop",
        "accuracy",
        "battery_level",
        "charging",
        "motion",
        "alarm",
        "sent_by",
        "trip_id"
      )
    select
      "new_point"."id" as "id",
      "new_point"."device_id" as "device_id",
      "new_point"."latitude" as "latitude",
      "new_point"."longitude" as "longitude",
      "new_point"."altitude" as "altitude",
      "new_point"."heading" as "heading",
      "new_point"."timestamp" as "timestamp",
      "new_point"."speed_kmh" as "speed_kmh",
      "new_point"."speed_mps" as "speed_mps",
      "new_point"."speed_mph" as "speed_mph",
      "new_point"."speed_knots" as "speed_knots",
      "new_point"."pdop" as "pdop",
      "new_point"."hdop" as "hdop",
      "new_point"."vdop" as "vdop",
      "new_point"."accuracy" as "accuracy",
      "new_point"."battery_level" as "battery_level",
      "new_point"."charging" as "charging",
      "new_point"."motion" as "motion",
      "new_point"."alarm" as "alarm",
      "new_point"."sent_by" as "sent_by",
      (
        select
          "logging_trip"."trip_id"
        from
          "logging_trip"
        where
          "logging_trip"."device_id" = "new_point"."device_id"
      ) as "trip_id"
    from
      unnest(
        $4::uuid[],
        $5::uuid[],
        $6::float8[],
        $7::float8[],
        $8::float8[],
        $9::float8[],
        $10::timestamptz[],
        $11::float8[],
        $12::float8[],
        $13::float8[],
        $14::float8[],
        $15::float8[],
        $16::float8[],
        $17::float8[],
        $18::float8[],
        $19::float8[],
        $20::bool[],
        $21::text[],
        $22::text[],
        $23::uuid[]
      ) as "new_point" (
        "id",
        "device_id",
        "latitude",
        "longitude",
        "altitude",
        "heading",
        "timestamp",
        "speed_kmh",
        "speed_mps",
        "speed_mph",
        "speed_knots",
        "pdop",
        "hdop",
        "vdop",
        "accuracy",
        "battery_level",
        "charging",
        "motion",
        "alarm",
        "sent_by"
      )
    on conflict ("device_id", "timestamp", "latitude", "longitude") do nothing
    returning
      "id"
  )
select
  (
    select
      count(*)
    from
      inserted
  )::int as "stored",
  (
    select
      string_agg(inserted.id::text, ',')
    from
      inserted
    having
      count(*) < $24::int
  ) as "ids",
  now() as "created_at",
  (
    select
      json_agg(logging_trip)
    from
      logging_trip
  ) as "trips";
-- parameters: ["active",true,["11111111-1111-4111-8111-111111111111"],"{aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa}","{11111111-1111-4111-8111-111111111111}","{52.52}","{13.405}","{34.5}","{90}","{2026-03-14T11:00:00.000Z}","{36}","{10}","{22.37}","{19.44}","{1.2}","{0.9}","{0.8}","{5}","{0.75}","{t}","{\"driving\"}","{\"sos \\\"now\\\"\"}","{44444444-4444-4444-8444-444444444444}",1]

-- insert of a batch: the columns every point sends, two devices and a point of none
with
  "logging_trip" as materialized (
    select
      "device_id"."device_id" as "device_id",
      (
        select
          "trip"."id"
        from
          (
            select
              "id"
            from
              "trips"
            where
              "device_id" = "device_id"."device_id"
              and "status" = $1
              and "gps_logging_enabled" = $2
            for no key update
          ) as "trip"
      ) as "trip_id"
    from
      unnest($3::uuid[]) as "device_id"
  ),
  "inserted" as (
    insert into
      "gps_points" (
        "id",
        "device_id",
        "latitude",
        "longitude",
        "timestamp",
        "speed_kmh",
        "speed_mps",
        "speed_mph",
        "speed_knots",
        "sent_by",
        "trip_id"
      )
    select
      "new_point"."id" as "id",
      "new_point"."device_id" as "device_id",
      "new_point"."latitude" as "latitude",
      "new_point"."longitude" as "longitude",
      "new_point"."timestamp" as "timestamp",
      "new_point"."speed_kmh" as "speed_kmh",
      "new_point"."speed_mps" as "speed_mps",
      "new_point"."speed_mph" as "speed_mph",
      "new_point"."speed_knots" as "speed_knots",
      "new_point"."sent_by" as "sent_by",
      (
        select
          "logging_trip"."trip_id"
        from
          "logging_trip"
        where
          "logging_trip"."device_id" = "new_point"."device_id"
      ) as "trip_id"
    from
      unnest(
        $4::uuid[],
        $5::uuid[],
        $6::float8[],
        $7::float8[],
        $8::timestamptz[],
        $9::float8[],
        $10::float8[],
        $11::float8[],
        $12::float8[],
        $13::uuid[]
      ) as "new_point" (
        "id",
        "device_id",
        "latitude",
        "longitude",
        "timestamp",
        "speed_kmh",
        "speed_mps",
        "speed_mph",
        "speed_knots",
        "sent_by"
      )
    on conflict ("device_id", "timestamp", "latitude", "longitude") do nothing
    returning
      "id"
  )
select
  (
    select
      count(*)
    from
      inserted
  )::int as "stored",
  (
    select
      string_agg(inserted.id::text, ',')
    from
      inserted
    having
      count(*) < $14::int
  ) as "ids",
  now() as "created_at",
  (
    select
      json_agg(logging_trip)
    from
      logging_trip
  ) as "trips";
-- parameters: ["active",true,["11111111-1111-4111-8111-111111111111","22222222-2222-4222-8222-222222222222"],"{dddddddd-dddd-4ddd-8ddd-dddddddddddd,cccccccc-cccc-4ccc-8ccc-cccccccccccc,bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb}","{NULL,11111111-1111-4111-8111-111111111111,22222222-2222-4222-8222-222222222222}","{52.52,52.52,52.52}","{13.405,13.405,13.405}","{2026-03-14T11:00:03.000Z,2026-03-14T11:00:02.000Z,2026-03-14T11:00:01.000Z}","{0,0,0}","{0,0,0}","{0,0,0}","{0,0,0}","{44444444-4444-4444-8444-444444444444,44444444-4444-4444-8444-444444444444,44444444-4444-4444-8444-444444444444}",3]

-- insert of a point sent again, then the point stored before read back (1 of 2)
with
  "logging_trip" as materialized (
    select
      "device_id"."device_id" as "device_id",
      (
        select
          "trip"."id"
        from
          (
            select
              "id"
            from
              "trips"
            where
              "device_id" = "device_id"."device_id"
              and "status" = $1
              and "gps_logging_enabled" = $2
            for no key update
          ) as "trip"
      ) as "trip_id"
    from
      unnest($3::uuid[]) as "device_id"
  ),
  "inserted" as (
    insert into
      "gps_points" (
        "id",
        "device_id",
        "latitude",
        "longitude",
        "timestamp",
        "speed_kmh",
        "speed_mps",
        "speed_mph",
        "speed_knots",
        "sent_by",
        "trip_id"
      )
    select
      "new_point"."id" as "id",
      "new_point"."device_id" as "device_id",
      "new_point"."latitude" as "latitude",
      "new_point"."longitude" as "longitude",
      "new_point"."timestamp" as "timestamp",
      "new_point"."speed_kmh" as "speed_kmh",
      "new_point"."speed_mps" as "speed_mps",
      "new_point"."speed_mph" as "speed_mph",
      "new_point"."speed_knots" as "speed_knots",
      "new_point"."sent_by" as "sent_by",
      (
        select
          "logging_trip"."trip_id"
        from
          "logging_trip"
        where
          "logging_trip"."device_id" = "new_point"."device_id"
      ) as "trip_id"
    from
      unnest(
        $4::uuid[],
        $5::uuid[],
        $6::float8[],
        $7::float8[],
        $8::timestamptz[],
        $9::float8[],
        $10::float8[],
        $11::float8[],
        $12::float8[],
        $13::uuid[]
      ) as "new_point" (
        "id",
        "device_id",
        "latitude",
        "longitude",
        "timestamp",
        "speed_kmh",
        "speed_mps",
        "speed_mph",
        "speed_knots",
        "sent_by"
      )
    on conflict ("device_id", "timestamp", "latitude", "longitude") do nothing
    returning
      "id"
  )
select
  (
    select
      count(*)
    from
      inserted
  )::int as "stored",
  (
    select
      string_agg(inserted.id::text, ',')
    from
      inserted
    having
      count(*) < $14::int
  ) as "ids",
  now() as "created_at",
  (
    select
      json_agg(logging_trip)
    from
      logging_trip
  ) as "trips";
-- parameters: ["active",true,["11111111-1111-4111-8111-111111111111"],"{aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa}","{11111111-1111-4111-8111-111111111111}","{52.52}","{13.405}","{2026-03-14T11:00:00.000Z}","{0}","{0}","{0}","{0}","{44444444-4444-4444-8444-444444444444}",1]

-- insert of a point sent again, then the point stored before read back (2 of 2)
select
  "gps_points"."id",
  "gps_points"."device_id",
  "gps_points"."trip_id",
  "gps_points"."latitude",
  "gps_points"."longitude",
  "gps_points"."altitude",
  "gps_points"."heading",
  "gps_points"."timestamp",
  "gps_points"."speed_kmh",
  "gps_points"."speed_mps",
  "gps_points"."speed_mph",
  "gps_points"."speed_knots",
  "gps_points"."pdop",
  "gps_points"."hdop",
  "gps_points"."vdop",
  "gps_points"."accuracy",
  "gps_points"."battery_level",
  "gps_points"."charging",
  "gps_points"."motion",
  "gps_points"."alarm",
  "gps_points"."created_at"
from
  unnest(
    $1::uuid[],
    $2::timestamptz[],
    $3::float8[],
    $4::float8[]
  ) as "fix" ("device_id", "timestamp", "latitude", "longitude")
  inner join "gps_points" on "gps_points"."device_id" = "fix"."device_id"
  and "gps_points"."timestamp" = "fix"."timestamp"
  and "gps_points"."latitude" = "fix"."latitude"
  and "gps_points"."longitude" = "fix"."longitude";
-- parameters: ["{11111111-1111-4111-8111-111111111111}","{2026-03-14T11:00:00.000Z}","{52.52}","{13.405}"]

-- insert of a file import's points: each names the import
with
  "logging_trip" as materialized (
    select
      "device_id"."device_id" as "device_id",
      (
        select
          "trip"."id"
        from
          (
            select
              "id"
            from
              "trips"
            where
              "device_id" = "device_id"."device_id"
              and "status" = $1
              and "gps_logging_enabled" = $2
            for no key update
          ) as "trip"
      ) as "trip_id"
    from
      unnest($3::uuid[]) as "device_id"
  ),
  "inserted" as (
    insert into
      "gps_points" (
        "id",
        "device_id",
        "latitude",
        "longitude",
        "timestamp",
        "speed_kmh",
        "speed_mps",
        "speed_mph",
        "speed_knots",
        "sent_by",
        "import_id",
        "trip_id"
      )
    select
      "new_point"."id" as "id",
      "new_point"."device_id" as "device_id",
      "new_point"."latitude" as "latitude",
      "new_point"."longitude" as "longitude",
      "new_point"."timestamp" as "timestamp",
      "new_point"."speed_kmh" as "speed_kmh",
      "new_point"."speed_mps" as "speed_mps",
      "new_point"."speed_mph" as "speed_mph",
      "new_point"."speed_knots" as "speed_knots",
      "new_point"."sent_by" as "sent_by",
      "new_point"."import_id" as "import_id",
      (
        select
          "logging_trip"."trip_id"
        from
          "logging_trip"
        where
          "logging_trip"."device_id" = "new_point"."device_id"
      ) as "trip_id"
    from
      unnest(
        $4::uuid[],
        $5::uuid[],
        $6::float8[],
        $7::float8[],
        $8::timestamptz[],
        $9::float8[],
        $10::float8[],
        $11::float8[],
        $12::float8[],
        $13::uuid[],
        $14::uuid[]
      ) as "new_point" (
        "id",
        "device_id",
        "latitude",
        "longitude",
        "timestamp",
        "speed_kmh",
        "speed_mps",
        "speed_mph",
        "speed_knots",
        "sent_by",
        "import_id"
      )
    on conflict ("device_id", "timestamp", "latitude", "longitude") do nothing
    returning
      "id"
  )
select
  (
    select
      count(*)
    from
      inserted
  )::int as "stored",
  (
    select
      string_agg(inserted.id::text, ',')
    from
      inserted
    having
      count(*) < $15::int
  ) as "ids",
  now() as "created_at",
  (
    select
      json_agg(logging_trip)
    from
      logging_trip
  ) as "trips";
-- parameters: ["active",true,["11111111-1111-4111-8111-111111111111"],"{eeeeeeee-eeee-4eee-8eee-eeeeeeeeeeee}","{11111111-1111-4111-8111-111111111111}","{52.52}","{13.405}","{2026-03-14T11:00:04.000Z}","{0}","{0}","{0}","{0}","{44444444-4444-4444-8444-444444444444}","{66666666-6666-4666-8666-666666666666}",1]

-- removal of a file import's points, but those of a trip
delete from "gps_points"
where
  (
    "device_id" = $1
    and "timestamp" >= $2
    and "timestamp" <= $3
    and "import_id" = $4
  )
  and "trip_id" is null;
-- parameters: ["11111111-1111-4111-8111-111111111111","2026-03-14T11:00:00.000Z","2026-03-14T12:00:00.000Z","66666666-6666-4666-8666-666666666666"]

-- a file import's points still stored
select
  count(*) as "n"
from
  "gps_points"
where
  (
    "device_id" = $1
    and "timestamp" >= $2
    and "timestamp" <= $3
    and "import_id" = $4
  );
-- parameters: ["11111111-1111-4111-8111-111111111111","2026-03-14T11:00:00.000Z","2026-03-14T12:00:00.000Z","66666666-6666-4666-8666-666666666666"]

-- latest point
select
  "id",
  "device_id",
  "trip_id",
  "latitude",
  "longitude",
  "altitude",
  "heading",
  "timestamp",
  "speed_kmh",
  "speed_mps",
  "speed_mph",
  "speed_knots",
  "pdop",
  "hdop",
  "vdop",
  "accuracy",
  "battery_level",
  "charging",
  "motion",
  "alarm",
  "created_at"
from
  "gps_points"
order by
  "timestamp" desc
limit
  $1;
-- parameters: [1]

-- latest point of a device
select
  "id",
  "device_id",
  "trip_id",
  "latitude",
  "longitude",
  "altitude",
  "heading",
  "timestamp",
  "speed_kmh",
  "speed_mps",
  "speed_mph",
  "speed_knots",
  "pdop",
  "hdop",
  "vdop",
  "accuracy",
  "battery_level",
  "charging",
  "motion",
  "alarm",
  "created_at"
from
  "gps_points"
where
  "device_id" = $1
order by
  "timestamp" desc
limit
  $2;
-- parameters: ["11111111-1111-4111-8111-111111111111",1]

-- latest point of each device
select
  "latest".*
from
  unnest($1::uuid[]) as "device_id"
  inner join lateral (
    select
      "id",
      "device_id",
      "trip_id",
      "latitude",
      "longitude",
      "altitude",
      "heading",
      "timestamp",
      "speed_kmh",
      "speed_mps",
      "speed_mph",
      "speed_knots",
      "pdop",
      "hdop",
      "vdop",
      "accuracy",
      "battery_level",
      "charging",
      "motion",
      "alarm",
      "created_at"
    from
      "gps_points"
    where
      "gps_points"."device_id" = "device_id"."device_id"
    order by
      "timestamp" desc
    limit
      $2
  ) as "latest" on true;
-- parameters: [["11111111-1111-4111-8111-111111111111","22222222-2222-4222-8222-222222222222"],1]

-- page of points, newest first, numbered, with the total (1 of 3)
select
  "id",
  "device_id",
  "trip_id",
  "latitude",
  "longitude",
  "altitude",
  "heading",
  "timestamp",
  "speed_kmh",
  "speed_mps",
  "speed_mph",
  "speed_knots",
  "pdop",
  "hdop",
  "vdop",
  "accuracy",
  "battery_level",
  "charging",
  "motion",
  "alarm",
  "created_at"
from
  "gps_points"
order by
  "timestamp" desc,
  "id" desc
limit
  $1
offset
  $2;
-- parameters: [51,100]

-- page of points, newest first, numbered, with the total (2 of 3)
explain (format json)
select
  1 as "one"
from
  "gps_points";
-- parameters: []

-- page of points, newest first, numbered, with the total (3 of 3)
select
  count(*) as n
from
  (
    (
      select
        1 as "one"
      from
        "gps_points"
      limit
        $1
    )
  ) as capped;
-- parameters: [10001]

-- page of points, newest first, after a cursor, with the total (1 of 3)
select
  "id",
  "device_id",
  "trip_id",
  "latitude",
  "longitude",
  "altitude",
  "heading",
  "timestamp",
  "speed_kmh",
  "speed_mps",
  "speed_mph",
  "speed_knots",
  "pdop",
  "hdop",
  "vdop",
  "accuracy",
  "battery_level",
  "charging",
  "motion",
  "alarm",
  "created_at"
from
  "gps_points"
where
  "timestamp" <= $1
  and ("timestamp", "id") < ($2, $3)
order by
  "timestamp" desc,
  "id" desc
limit
  $4;
-- parameters: ["2026-03-14T11:00:00.000Z","2026-03-14T11:00:00.000Z","aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa",51]

-- page of points, newest first, after a cursor, with the total (2 of 3)
explain (format json)
select
  1 as "one"
from
  "gps_points";
-- parameters: []

-- page of points, newest first, after a cursor, with the total (3 of 3)
select
  count(*) as n
from
  (
    (
      select
        1 as "one"
      from
        "gps_points"
      limit
        $1
    )
  ) as capped;
-- parameters: [10001]

-- page of a trip's points, numbered
select
  "id",
  "device_id",
  "trip_id",
  "latitude",
  "longitude",
  "altitude",
  "heading",
  "timestamp",
  "speed_kmh",
  "speed_mps",
  "speed_mph",
  "speed_knots",
  "pdop",
  "hdop",
  "vdop",
  "accuracy",
  "battery_level",
  "charging",
  "motion",
  "alarm",
  "created_at"
from
  "gps_points"
where
  "trip_id" = $1
order by
  "timestamp",
  "id"
limit
  $2
offset
  $3;
-- parameters: ["33333333-3333-4333-8333-333333333333",51,100]

-- page of a trip's points after a cursor
select
  "id",
  "device_id",
  "trip_id",
  "latitude",
  "longitude",
  "altitude",
  "heading",
  "timestamp",
  "speed_kmh",
  "speed_mps",
  "speed_mph",
  "speed_knots",
  "pdop",
  "hdop",
  "vdop",
  "accuracy",
  "battery_level",
  "charging",
  "motion",
  "alarm",
  "created_at"
from
  "gps_points"
where
  "trip_id" = $1
  and "timestamp" >= $2
  and ("timestamp", "id") > ($3, $4)
order by
  "timestamp",
  "id"
limit
  $5;
-- parameters: ["33333333-3333-4333-8333-333333333333","2026-03-14T11:00:00.000Z","2026-03-14T11:00:00.000Z","aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa",51]

-- first points of trips
select
  "point".*
from
  unnest($1::uuid[]) as "trip_id"
  inner join lateral (
    select
      "id",
      "device_id",
      "trip_id",
      "latitude",
      "longitude",
      "altitude",
      "heading",
      "timestamp",
      "speed_kmh",
      "speed_mps",
      "speed_mph",
      "speed_knots",
      "pdop",
      "hdop",
      "vdop",
      "accuracy",
      "battery_level",
      "charging",
      "motion",
      "alarm",
      "created_at"
    from
      "gps_points"
    where
      "gps_points"."trip_id" = "trip_id"."trip_id"
    order by
      "timestamp",
      "id"
    limit
      $2
  ) as "point" on true;
-- parameters: [["33333333-3333-4333-8333-333333333333","55555555-5555-4555-8555-555555555555"],20]

-- a device's points in a time range after a cursor (file export)
select
  "id",
  "device_id",
  "trip_id",
  "latitude",
  "longitude",
  "altitude",
  "heading",
  "timestamp",
  "speed_kmh",
  "speed_mps",
  "speed_mph",
  "speed_knots",
  "pdop",
  "hdop",
  "vdop",
  "accuracy",
  "battery_level",
  "charging",
  "motion",
  "alarm",
  "created_at"
from
  "gps_points"
where
  "device_id" = $1
  and "timestamp" >= $2
  and "timestamp" <= $3
  and "timestamp" >= $4
  and ("timestamp", "id") > ($5, $6)
order by
  "timestamp",
  "id"
limit
  $7;
-- parameters: ["11111111-1111-4111-8111-111111111111","2026-03-14T11:00:00.000Z","2026-03-15T00:00:00.000Z","2026-03-14T11:00:00.000Z","2026-03-14T11:00:00.000Z","aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa",1000]

-- a user's points after a cursor (personal data export)
select
  "id",
  "device_id",
  "trip_id",
  "latitude",
  "longitude",
  "altitude",
  "heading",
  "timestamp",
  "speed_kmh",
  "speed_mps",
  "speed_mph",
  "speed_knots",
  "pdop",
  "hdop",
  "vdop",
  "accuracy",
  "battery_level",
  "charging",
  "motion",
  "alarm",
  "created_at"
from
  "gps_points"
where
  "sent_by" = $1
  and "timestamp" >= $2
  and ("timestamp", "id") > ($3, $4)
order by
  "timestamp",
  "id"
limit
  $5;
-- parameters: ["44444444-4444-4444-8444-444444444444","2026-03-14T11:00:00.000Z","2026-03-14T11:00:00.000Z","aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa",1000]

-- a device's points others sent, after a cursor (personal data export of its owner)
select
  "id",
  "device_id",
  "trip_id",
  "latitude",
  "longitude",
  "altitude",
  "heading",
  "timestamp",
  "speed_kmh",
  "speed_mps",
  "speed_mph",
  "speed_knots",
  "pdop",
  "hdop",
  "vdop",
  "accuracy",
  "battery_level",
  "charging",
  "motion",
  "alarm",
  "created_at"
from
  "gps_points"
where
  "device_id" = $1
  and "sent_by" is distinct from $2
  and "timestamp" >= $3
  and ("timestamp", "id") > ($4, $5)
order by
  "timestamp",
  "id"
limit
  $6;
-- parameters: ["11111111-1111-4111-8111-111111111111","44444444-4444-4444-8444-444444444444","2026-03-14T11:00:00.000Z","2026-03-14T11:00:00.000Z","aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa",1000]

-- track: extent of a time range
select
  count(*) as total,
  min(latitude) as south,
  min(longitude) as west,
  max(latitude) as north,
  max(longitude) as east
from
  gps_points
where
  device_id = $1
  and "timestamp" >= $2
  and "timestamp" <= $3;
-- parameters: ["11111111-1111-4111-8111-111111111111","2026-03-14T11:00:00.000Z","2026-03-15T00:00:00.000Z"]

-- track: extent of every point of a device
select
  count(*) as total,
  min(latitude) as south,
  min(longitude) as west,
  max(latitude) as north,
  max(longitude) as east
from
  gps_points
where
  device_id = $1;
-- parameters: ["11111111-1111-4111-8111-111111111111"]

-- track: points thinned for zoom 12
with
  points as (
    select
      "timestamp" as at,
      id,
      latitude,
      longitude,
      speed_kmh,
      floor((longitude + 180) / 360 * $1::float8) as px,
      floor(
        (
          0.5 - ln(
            tan(
              pi() / 4 + radians(least(greatest(latitude, $2::float8), $3::float8)) / 2
            )
          ) / (2 * pi())
        ) * $4::float8
      ) as py
    from
      gps_points
    where
      device_id = $5
      and "timestamp" >= $6
      and "timestamp" <= $7
  ),
  marked as (
    select
      *,
      lag(px) over w as before_px,
      lag(py) over w as before_py,
      lead(at) over w as next_at
    from
      points
    window
      w as (
        order by
          at,
          id
      )
  ),
  thinned as (
    select
      *,
      row_number() over (
        order by
          at,
          id
      ) as n,
      count(*) over () as all_kept
    from
      marked
    where
      $8::float8 is null
      or before_px is null
      or next_at is null
      or px <> before_px
      or py <> before_py
  ),
  kept as (
    -- Over the cap: run k (0 to MAX - 1) holds the n with floor((n - 1) * (MAX - 1) / (all_kept - 1)) = k; the
    -- first row of each run is kept, so the first and last points are.
    select
      *
    from
      thinned
    where
      all_kept <= $9::bigint
      or n = 1
      or (n - 1) * $10::bigint / (all_kept - 1) <> (n - 2) * $11::bigint / (all_kept - 1)
  )
select
  count(*) as kept,
  json_build_object(
    'time',
    json_agg(
      (
        extract(
          epoch
          from
            at
        ) * 1000
      )::bigint
      order by
        at,
        id
    ),
    'latitude',
    json_agg(
      latitude
      order by
        at,
        id
    ),
    'longitude',
    json_agg(
      longitude
      order by
        at,
        id
    ),
    'speed_kmh',
    json_agg(
      speed_kmh
      order by
        at,
        id
    )
  )::text as json
from
  kept;
-- parameters: [1048576,-85.0511287798,85.0511287798,1048576,"11111111-1111-4111-8111-111111111111","2026-03-14T11:00:00.000Z","2026-03-15T00:00:00.000Z",1048576,100000,99999,99999]

-- track: every point
with
  points as (
    select
      "timestamp" as at,
      id,
      latitude,
      longitude,
      speed_kmh,
      floor((longitude + 180) / 360 * $1::float8) as px,
      floor(
        (
          0.5 - ln(
            tan(
              pi() / 4 + radians(least(greatest(latitude, $2::float8), $3::float8)) / 2
            )
          ) / (2 * pi())
        ) * $4::float8
      ) as py
    from
      gps_points
    where
      device_id = $5
      and "timestamp" >= $6
      and "timestamp" <= $7
  ),
  marked as (
    select
      *,
      lag(px) over w as before_px,
      lag(py) over w as before_py,
      lead(at) over w as next_at
    from
      points
    window
      w as (
        order by
          at,
          id
      )
  ),
  thinned as (
    select
      *,
      row_number() over (
        order by
          at,
          id
      ) as n,
      count(*) over () as all_kept
    from
      marked
    where
      $8::float8 is null
      or before_px is null
      or next_at is null
      or px <> before_px
      or py <> before_py
  ),
  kept as (
    -- Over the cap: run k (0 to MAX - 1) holds the n with floor((n - 1) * (MAX - 1) / (all_kept - 1)) = k; the
    -- first row of each run is kept, so the first and last points are.
    select
      *
    from
      thinned
    where
      all_kept <= $9::bigint
      or n = 1
      or (n - 1) * $10::bigint / (all_kept - 1) <> (n - 2) * $11::bigint / (all_kept - 1)
  )
select
  count(*) as kept,
  json_build_object(
    'time',
    json_agg(
      (
        extract(
          epoch
          from
            at
        ) * 1000
      )::bigint
      order by
        at,
        id
    ),
    'latitude',
    json_agg(
      latitude
      order by
        at,
        id
    ),
    'longitude',
    json_agg(
      longitude
      order by
        at,
        id
    ),
    'speed_kmh',
    json_agg(
      speed_kmh
      order by
        at,
        id
    )
  )::text as json
from
  kept;
-- parameters: [null,-85.0511287798,85.0511287798,null,"11111111-1111-4111-8111-111111111111","2026-03-14T11:00:00.000Z","2026-03-15T00:00:00.000Z",null,100000,99999,99999]
