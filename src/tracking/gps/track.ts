import { sql, type Kysely } from 'kysely';
import type { Schema } from '../../platform/db/schema/index.js';

export interface TrackRange {
  from?: Date | undefined;
  to?: Date | undefined;
}
export interface TrackBounds {
  south: number;
  west: number;
  north: number;
  east: number;
}

// Web Mercator stops here (EPSG:3857), as map libraries do.
const MAX_LATITUDE = 85.0511287798;
/**
 * The largest zoom a track is thinned for: a pixel is 4 cm at the equator, past any map's tiles (OpenStreetMap's
 * stop at 19), so a larger one would only ask for every point.
 */
export const MAX_TRACK_ZOOM = 22;
/**
 * The most points GET /v1/gps/track answers, at any zoom (a map a few thousand pixels wide shows no more; the
 * export streams any number). Unthinned, a longer range is refused; thinned, the kept points are thinned further
 * to this many, so the answer (at most about 9 MB of JSON) is always drawable.
 */
export const MAX_TRACK_POINTS = 100_000;
/** The same cap, by the name the unthinned refusal reads. */
export const MAX_UNTHINNED_TRACK_POINTS = MAX_TRACK_POINTS;

/** Where a latitude lies on the Web Mercator square, 0 (north edge) to 1 (south edge). */
const mercatorY = (latitude: number) => {
  const phi = (Math.max(-MAX_LATITUDE, Math.min(MAX_LATITUDE, latitude)) * Math.PI) / 180;
  return 0.5 - Math.log(Math.tan(Math.PI / 4 + phi / 2)) / (2 * Math.PI);
};

/** The largest zoom (256-pixel tiles) at which these bounds fit a width × height view, as a map's fitBounds picks it. */
export function fitZoom(bounds: TrackBounds, width: number, height: number): number {
  const spanX = (bounds.east - bounds.west) / 360;
  const spanY = mercatorY(bounds.south) - mercatorY(bounds.north);
  const zoom = Math.floor(
    Math.log2(Math.min(spanX > 0 ? width / (256 * spanX) : Infinity, spanY > 0 ? height / (256 * spanY) : Infinity)),
  );
  return Number.isFinite(zoom) ? Math.max(0, Math.min(MAX_TRACK_ZOOM, zoom)) : MAX_TRACK_ZOOM;
}

/**
 * A device's track for drawing, read in the database: no row per point reaches Node (decoding 100,000 rows
 * costs seconds on the embedded database; one aggregated JSON text costs a tenth of that). With a zoom, a
 * point in the same pixel (256-pixel Web Mercator tiles at that zoom) as the point before it is left out,
 * which is what a canvas drawing at that zoom would skip; the first and last points are always kept. More than
 * MAX_TRACK_POINTS kept (a zoom so close that most points are pixels of their own) are thinned again to exactly
 * that many, evenly by their order: the first of each of MAX_TRACK_POINTS equal runs, the last point too.
 */
export function createTrackReader(db: Kysely<Schema>) {
  // Only the bounds given, so the index range (and the monthly partitions) are narrowed by them.
  const inRange = (deviceId: string, range: TrackRange) =>
    sql.join(
      [
        sql`device_id = ${deviceId}`,
        ...(range.from ? [sql`"timestamp" >= ${range.from}`] : []),
        ...(range.to ? [sql`"timestamp" <= ${range.to}`] : []),
      ],
      sql` and `,
    );

  return {
    /** How many points the range holds and the box around them (null without points). */
    async extent(deviceId: string, range: TrackRange): Promise<{ total: number; bounds: TrackBounds | null }> {
      const { rows } = await sql<{
        total: string;
        south: number | null;
        west: number | null;
        north: number | null;
        east: number | null;
      }>`
        select count(*) as total, min(latitude) as south, min(longitude) as west, max(latitude) as north, max(longitude) as east
        from gps_points where ${inRange(deviceId, range)}`.execute(db);
      const row = rows[0]!;
      const total = Number(row.total);
      return {
        total,
        bounds: total ? { south: row.south!, west: row.west!, north: row.north!, east: row.east! } : null,
      };
    },

    /** The kept points, oldest first, as the JSON text of four arrays: time (ms), latitude, longitude, speed_kmh. */
    async columnsJson(
      deviceId: string,
      range: TrackRange,
      zoom: number | null,
    ): Promise<{ kept: number; json: string }> {
      const scale = zoom === null ? null : 256 * 2 ** zoom;
      const { rows } = await sql<{ kept: string; json: string | null }>`
        with points as (
          select "timestamp" as at, id, latitude, longitude, speed_kmh,
            floor((longitude + 180) / 360 * ${scale}::float8) as px,
            floor((0.5 - ln(tan(pi() / 4 + radians(least(greatest(latitude, ${-MAX_LATITUDE}::float8), ${MAX_LATITUDE}::float8)) / 2)) / (2 * pi())) * ${scale}::float8) as py
          from gps_points where ${inRange(deviceId, range)}
        ), marked as (
          select *, lag(px) over w as before_px, lag(py) over w as before_py, lead(at) over w as next_at
          from points window w as (order by at, id)
        ), thinned as (
          select *, row_number() over (order by at, id) as n, count(*) over () as all_kept from marked
          where ${scale}::float8 is null or before_px is null or next_at is null or px <> before_px or py <> before_py
        ), kept as (
          -- Over the cap: run k (0 to MAX - 1) holds the n with floor((n - 1) * (MAX - 1) / (all_kept - 1)) = k; the
          -- first row of each run is kept, so the first and last points are.
          select * from thinned
          where all_kept <= ${MAX_TRACK_POINTS}::bigint or n = 1
            or (n - 1) * ${MAX_TRACK_POINTS - 1}::bigint / (all_kept - 1) <> (n - 2) * ${MAX_TRACK_POINTS - 1}::bigint / (all_kept - 1)
        )
        select count(*) as kept, json_build_object(
          'time', json_agg((extract(epoch from at) * 1000)::bigint order by at, id),
          'latitude', json_agg(latitude order by at, id),
          'longitude', json_agg(longitude order by at, id),
          'speed_kmh', json_agg(speed_kmh order by at, id))::text as json
        from kept`.execute(db);
      const row = rows[0]!;
      const kept = Number(row.kept);
      return { kept, json: kept ? row.json! : '{"time":[],"latitude":[],"longitude":[],"speed_kmh":[]}' };
    },
  };
}
