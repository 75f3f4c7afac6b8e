import {
  createQueryId,
  sql,
  type CompiledQuery,
  type Expression,
  type ExpressionBuilder,
  type Kysely,
  type Selectable,
  type SelectQueryBuilder,
} from 'kysely';
import { cappedCount, tableCount } from '../../platform/db/count.js';
import type { PageStart, RowKey } from '../../platform/db/page.js';
import { prepared } from '../../platform/db/prepared.js';
import { setRecent } from '../../platform/recent.js';
import type { Schema } from '../../platform/db/schema/index.js';

export const GPS_COLUMNS = [
  'id',
  'device_id',
  'trip_id',
  'latitude',
  'longitude',
  'altitude',
  'heading',
  'timestamp',
  'speed_kmh',
  'speed_mps',
  'speed_mph',
  'speed_knots',
  'pdop',
  'hdop',
  'vdop',
  'accuracy',
  'battery_level',
  'charging',
  'motion',
  'alarm',
  'created_at',
] as const;

/** The columns a new point sets (trip_id aside: the insert finds it), with the PostgreSQL type of each, for `unnest`. */
const INSERTED = {
  id: 'uuid',
  device_id: 'uuid',
  latitude: 'float8',
  longitude: 'float8',
  altitude: 'float8',
  heading: 'float8',
  timestamp: 'timestamptz',
  speed_kmh: 'float8',
  speed_mps: 'float8',
  speed_mph: 'float8',
  speed_knots: 'float8',
  pdop: 'float8',
  hdop: 'float8',
  vdop: 'float8',
  accuracy: 'float8',
  battery_level: 'float8',
  charging: 'bool',
  motion: 'text',
  alarm: 'text',
  sent_by: 'uuid',
  import_id: 'uuid',
} as const;
type InsertedColumn = keyof typeof INSERTED;
const INSERTED_COLUMNS = Object.keys(INSERTED) as InsertedColumn[];
/**
 * Columns a batch always sends; any other is left out of a batch in which no point has it (null, as its
 * default): a batch of points without accuracy, battery or motion sends PostgreSQL no column of 10,000 NULLs.
 */
const ALWAYS_SENT = new Set<string>(['id', 'device_id', 'latitude', 'longitude', 'timestamp']);

/** The rule of idempotent delivery (unique index gps_points_same_fix): one point per device, time and position. */
const SAME_FIX = ['device_id', 'timestamp', 'latitude', 'longitude'] as const;
const fixKey = (p: { device_id: string | null; timestamp: Date; latitude: number; longitude: number }) =>
  `${p.device_id ?? ''}|${p.timestamp.getTime()}|${p.latitude}|${p.longitude}`;

/** Device ids in code-point order, no device first (as PostgreSQL orders uuids in the C collation of their text). */
const compareDevices = (a: string | null, b: string | null) =>
  a === b ? 0 : a === null ? -1 : b === null ? 1 : a < b ? -1 : 1;
type Fix = Pick<NewGpsPoint, 'device_id' | 'timestamp' | 'latitude' | 'longitude'>;
const compareFixes = (a: Fix, b: Fix) =>
  compareDevices(a.device_id, b.device_id) ||
  a.timestamp.getTime() - b.timestamp.getTime() ||
  a.latitude - b.latitude ||
  a.longitude - b.longitude;

/**
 * Points in the order of gps_points_same_fix (device, time, position). A tracker's batch or a file is most
 * often in that order already: one pass finds out, where sorting 10,000 points took a tenth of a batch's work.
 */
function inFixOrder<P extends Fix>(points: readonly P[]): readonly P[] {
  for (let i = 1; i < points.length; i++)
    if (compareFixes(points[i - 1]!, points[i]!) > 0) return [...points].sort(compareFixes);
  return points;
}

type GpsRow = Pick<Selectable<Schema['gps_points']>, (typeof GPS_COLUMNS)[number]>;

/** A new point as stored, in the columns a read gives (GPS_COLUMNS): what the insert returns need not be parsed again. */
function storedRow(point: NewGpsPoint & { id: string }, tripId: string | null, createdAt: Date): GpsRow {
  return {
    id: point.id,
    device_id: point.device_id,
    trip_id: tripId,
    latitude: point.latitude,
    longitude: point.longitude,
    altitude: point.altitude,
    heading: point.heading,
    timestamp: point.timestamp,
    speed_kmh: point.speed_kmh,
    speed_mps: point.speed_mps,
    speed_mph: point.speed_mph,
    speed_knots: point.speed_knots,
    pdop: point.pdop,
    hdop: point.hdop,
    vdop: point.vdop,
    accuracy: point.accuracy,
    battery_level: point.battery_level,
    charging: point.charging,
    motion: point.motion,
    alarm: point.alarm,
    created_at: createdAt,
  };
}

/**
 * One column of a batch as PostgreSQL's array literal text (`{1.5,NULL,"a \"b\""}`): built here in one pass,
 * where the driver would inspect and escape each of 10,000 values of each column one call at a time. Numbers,
 * ISO times and uuids (made here or read from the database, never a client's text) need no quotes; other text
 * is quoted and escaped; a Date goes as ISO text.
 */
function arrayLiteral<R, C extends keyof R>(rows: readonly R[], column: C, type: string): string {
  const bare = type === 'uuid';
  const values = new Array<unknown>(rows.length);
  // A column of numbers only (or of uuids only) goes through Array#join, one native pass without a string per value.
  let joinable = true;
  for (let i = 0; i < rows.length; i++) {
    const value = rows[i]![column];
    values[i] = value;
    if (joinable && typeof value !== 'number' && !(bare && typeof value === 'string')) joinable = false;
  }
  if (joinable) return `{${values.join(',')}}`;
  const parts = new Array<string>(rows.length);
  for (let i = 0; i < rows.length; i++) {
    const value = values[i];
    if (value === null || value === undefined) parts[i] = 'NULL';
    else if (typeof value === 'number') parts[i] = String(value);
    else if (typeof value === 'boolean') parts[i] = value ? 't' : 'f';
    else if (value instanceof Date) parts[i] = value.toISOString();
    else if (bare) parts[i] = value as string;
    else parts[i] = `"${String(value).replace(/[\\"]/g, '\\$&')}"`;
  }
  return `{${parts.join(',')}}`;
}

/**
 * `unnest` of one array per column: a whole batch is a handful of parameters, however many rows (no 65,535-parameter
 * limit). `arrayOf` gives each column's parameter: the rows' array literal, or a slot of a statement built once.
 */
function unnestOf<R, C extends keyof R & string, A extends string>(
  columns: readonly C[],
  types: Record<C, string>,
  arrayOf: (column: C) => unknown,
  alias: A,
) {
  const arrays = columns.map((column) => sql`${arrayOf(column)}::${sql.raw(types[column])}[]`);
  return sql<Pick<R, C>>`unnest(${sql.join(arrays)})`.as<A>(
    sql`${sql.id(alias)}(${sql.join(columns.map((column) => sql.id(column)))})`,
  );
}

/** A point of a batch as stored, and whether it was stored before (a client resent it). */
export interface StoredPoint {
  point: ReturnType<typeof toGpsPoint<GpsRow>>;
  duplicate: boolean;
}

/** What the insert of a batch answers: one row, whatever the batch holds. */
interface InsertedBatch {
  /** How many points were stored (a resent point is not). */
  stored: number;
  /** The ids stored, separated by commas; null when every point was (or none). */
  ids: string | null;
  /** When they were stored (created_at's default, the transaction's now()). */
  created_at: Date;
  /** The trip each device's points joined. */
  trips: { device_id: string; trip_id: string | null }[] | null;
}

/** Column sets whose insert is kept built (see insertStatements). */
const MAX_INSERT_SHAPES = 64;

/** Stands for a parameter in a statement built once: no value a batch sends can look like it. */
const slot = (name: string) => `\u0000slot:${name}`;

/**
 * The insert of a batch of points (see `insertMany`), built and compiled once per set of columns sent (the 64
 * most recently used kept) and prepared (its text runs for every batch): a batch only fills in its arrays, one
 * per column, and its devices.
 * Building and compiling the statement was a tenth of the work of a point sent alone.
 */
function insertStatements(db: Kysely<Schema>) {
  const built = new Map<
    LoggingTripQuery | undefined,
    Map<string, { query: CompiledQuery<InsertedBatch>; devicesAt: number; countAt: number; columnsAt: number[] }>
  >();

  function build(loggingTrip: LoggingTripQuery | undefined, columns: readonly InsertedColumn[]) {
    const newPoints = unnestOf<Record<InsertedColumn, unknown>, InsertedColumn, 'new_point'>(
      columns,
      INSERTED,
      slot,
      'new_point',
    );
    const query = db
      .with(
        (cte) => cte('logging_trip').materialized(),
        (qc) =>
          qc.selectFrom(sql<{ device_id: string }>`unnest(${slot('devices')}::uuid[])`.as('device_id')).select((eb) => [
            sql.ref<string>('device_id.device_id').as('device_id'),
            loggingTrip
              ? eb
                  .selectFrom(() => loggingTrip(sql.ref('device_id.device_id')).as('trip'))
                  .select('trip.id')
                  .as('trip_id')
              : sql<string | null>`null::uuid`.as('trip_id'),
          ]),
      )
      .with('inserted', (qc) =>
        qc
          .insertInto('gps_points')
          .columns([...columns, 'trip_id'])
          .expression((eb) =>
            eb
              .selectFrom(newPoints)
              .select(columns.map((column) => sql.ref(`new_point.${column}`).as(column)))
              .select((sub) =>
                sub
                  .selectFrom('logging_trip')
                  .select('logging_trip.trip_id')
                  .whereRef('logging_trip.device_id', '=', sql.ref('new_point.device_id'))
                  .as('trip_id'),
              ),
          )
          .onConflict((conflict) => conflict.columns(SAME_FIX).doNothing())
          .returning('id'),
      )
      .selectNoFrom([
        sql<number>`(select count(*) from inserted)::int`.as('stored'),
        // Only when some point was there before (most batches store every point). One text, split here: the
        // driver's array parser reads 10,000 uuids a character at a time.
        sql<
          string | null
        >`(select string_agg(inserted.id::text, ',') from inserted having count(*) < ${slot('count')}::int)`.as('ids'),
        sql<Date>`now()`.as('created_at'),
        sql<InsertedBatch['trips']>`(select json_agg(logging_trip) from logging_trip)`.as('trips'),
      ])
      .compile();
    const at = (name: string) => {
      const index = query.parameters.indexOf(slot(name));
      if (index < 0) throw new Error(`the batch insert has no parameter for ${name}`);
      return index;
    };
    return { query, devicesAt: at('devices'), countAt: at('count'), columnsAt: columns.map(at) };
  }

  return (loggingTrip: LoggingTripQuery | undefined, columns: readonly InsertedColumn[]) => {
    const ofTrip = built.get(loggingTrip) ?? built.set(loggingTrip, new Map()).get(loggingTrip)!;
    const key = columns.join(',');
    // Clients send a handful of column sets; one sending every combination of optional fields must not grow this for good.
    const statement = setRecent(ofTrip, key, ofTrip.get(key) ?? build(loggingTrip, columns), MAX_INSERT_SHAPES);
    return {
      /** The statement for these devices and rows (in the columns it was built for). */
      filled(devices: string[], rows: readonly (NewGpsPoint & { id: string })[]): CompiledQuery<InsertedBatch> {
        const parameters = [...statement.query.parameters];
        parameters[statement.devicesAt] = devices;
        parameters[statement.countAt] = rows.length;
        columns.forEach(
          (column, i) => (parameters[statement.columnsAt[i]!] = arrayLiteral(rows, column, INSERTED[column])),
        );
        return prepared({ ...statement.query, parameters, queryId: createQueryId() });
      },
    };
  };
}

/** A point as the API shows it: `device_id` only when the point belongs to a device (the spec's "present when"). */
export function toGpsPoint<T extends { device_id: string | null }>(
  row: T,
): Omit<T, 'device_id'> & { device_id?: string } {
  if (row.device_id !== null) return row as Omit<T, 'device_id'> & { device_id: string };
  const { device_id: _none, ...point } = row;
  return point;
}

/** The active GPS-logging trip of a device (an id, or a column of the outer query), as a subquery (the trips module builds it). */
export type LoggingTripQuery = (
  deviceId: string | Expression<string | null>,
) => SelectQueryBuilder<Schema, 'trips', { id: string }>;

export type NewGpsPoint = Omit<Schema['gps_points'], 'id' | 'created_at'> & { timestamp: Date };

/** The points a file import stored: its device, its id, and the times of its first and last point. */
export interface ImportedPoints {
  deviceId: string;
  importId: string;
  from: Date;
  to: Date;
}

/** An import's points, found by the device's index over the import's time range (no index on import_id). */
const importedPoints = (eb: ExpressionBuilder<Schema, 'gps_points'>, target: ImportedPoints) =>
  eb.and([
    eb('device_id', '=', target.deviceId),
    eb('timestamp', '>=', target.from),
    eb('timestamp', '<=', target.to),
    eb('import_id', '=', target.importId),
  ]);

/**
 * `query` from `start`: the rows past a key (`<` newest first, `>` oldest first), or `offset` rows in. The key's
 * time alone bounds it too (implied by the row comparison, which PostgreSQL does not prune by), so the months
 * wholly on the far side of the key are never opened (gps_points is partitioned by month, migration 0035).
 */
function startingAt<O>(query: SelectQueryBuilder<Schema, 'gps_points', O>, start: PageStart, past: '<' | '>') {
  if ('offset' in start) return query.offset(start.offset);
  return query
    .where('timestamp', past === '<' ? '<=' : '>=', start.after.at)
    .where((eb) => eb(eb.refTuple('timestamp', 'id'), past, eb.tuple(start.after.at, start.after.id)));
}

/**
 * The hot reads, built apart from their execution so that the query-plan test explains exactly
 * these queries (each must walk an index, whatever the table size).
 */
export function gpsQueries(db: Kysely<Schema>) {
  return {
    /** The newest point overall, or of one device (walks gps_points_time_id / gps_points_same_fix backwards). */
    latest(deviceId?: string) {
      const query = db.selectFrom('gps_points').select(GPS_COLUMNS).orderBy('timestamp', 'desc').limit(1);
      return deviceId === undefined ? query : query.where('device_id', '=', deviceId);
    },

    /**
     * The newest point of each of these devices: one index probe per device. (DISTINCT ON over
     * gps_points would walk every row of the index, which grows with the points, not the devices.)
     */
    latestPerDevice: (deviceIds: string[]) =>
      db
        .selectFrom(sql<{ device_id: string }>`unnest(${deviceIds}::uuid[])`.as('device_id'))
        .innerJoinLateral(
          (eb) =>
            eb
              .selectFrom('gps_points')
              .select(GPS_COLUMNS)
              .whereRef('gps_points.device_id', '=', 'device_id.device_id')
              .orderBy('timestamp', 'desc')
              .limit(1)
              .as('latest'),
          (join) => join.onTrue(),
        )
        .selectAll('latest'),

    /**
     * A page of points, newest first: ties of time by id, descending too, so the whole order is one index
     * (gps_points_time_id) and a page after a key is one range of it.
     */
    page: (limit: number, start: PageStart) =>
      startingAt(db.selectFrom('gps_points').select(GPS_COLUMNS), start, '<')
        .orderBy('timestamp', 'desc')
        .orderBy('id', 'desc')
        .limit(limit),

    /**
     * A page of the points of some devices, each from a time on (a self-service user's own and shared devices),
     * newest first as `page`: one range of gps_points_same_fix per device, merged, so a user with few points
     * in a large instance reads only theirs. `since` null: every point of the device.
     */
    windowPage: (limit: number, start: PageStart, windows: { deviceId: string; since: Date | null }[]) => {
      const skipped = 'offset' in start ? start.offset : 0;
      return db
        .selectFrom(
          // (Two unnests in one select list go along side by side: the window of each device.)
          sql<{
            device_id: string;
            since: Date | null;
          }>`(select unnest(${windows.map((w) => w.deviceId)}::uuid[]) as device_id, unnest(${windows.map((w) => w.since)}::timestamptz[]) as since)`.as(
            'w',
          ),
        )
        .innerJoinLateral(
          (eb) =>
            startingAt(
              eb
                .selectFrom('gps_points')
                .select(GPS_COLUMNS)
                .whereRef('gps_points.device_id', '=', sql.ref('w.device_id'))
                .where(sql<boolean>`(w.since is null or gps_points.timestamp >= w.since)`),
              'offset' in start ? { offset: 0 } : start,
              '<',
            )
              .orderBy('timestamp', 'desc')
              .orderBy('id', 'desc')
              .limit(limit + skipped)
              .as('point'),
          (join) => join.onTrue(),
        )
        .selectAll('point')
        .orderBy('point.timestamp', 'desc')
        .orderBy('point.id', 'desc')
        .limit(limit)
        .offset(skipped);
    },

    /**
     * A page of a trip's points, oldest first, ties by id (a range of gps_points_trip_time_id); with `since`, only
     * those from then on (a grantee's history window).
     */
    tripPage: (tripId: string, limit: number, start: PageStart, since?: Date) =>
      startingAt(
        db
          .selectFrom('gps_points')
          .select(GPS_COLUMNS)
          .where('trip_id', '=', tripId)
          .$if(since !== undefined, (query) => query.where('timestamp', '>=', since!)),
        start,
        '>',
      )
        .orderBy('timestamp')
        .orderBy('id')
        .limit(limit),
  };
}

export function createGpsRepo(db: Kysely<Schema>) {
  const queries = gpsQueries(db);
  const FIX_TYPES = { device_id: 'uuid', timestamp: 'timestamptz', latitude: 'float8', longitude: 'float8' };
  /** The stored points of these fixes (device, time, position): a walk of gps_points_same_fix per fix. */
  async function storedFixes(fixes: readonly NewGpsPoint[], executor: Kysely<Schema> = db) {
    const read = (withDevice: boolean) => {
      const keys = fixes.filter((fix) => (fix.device_id !== null) === withDevice);
      if (keys.length === 0) return Promise.resolve([]);
      return executor
        .selectFrom(unnestOf(SAME_FIX, FIX_TYPES, (column) => arrayLiteral(keys, column, FIX_TYPES[column]), 'fix'))
        .innerJoin('gps_points', (join) =>
          (withDevice
            ? join.onRef('gps_points.device_id', '=', sql.ref('fix.device_id'))
            : join.on('gps_points.device_id', 'is', null)
          )
            .onRef('gps_points.timestamp', '=', sql.ref('fix.timestamp'))
            .onRef('gps_points.latitude', '=', sql.ref('fix.latitude'))
            .onRef('gps_points.longitude', '=', sql.ref('fix.longitude')),
        )
        .select(GPS_COLUMNS.map((column) => `gps_points.${column}` as const))
        .execute();
    };
    return (await Promise.all([read(true), read(false)])).flat();
  }
  const everyPoint = db.selectFrom('gps_points').select(sql<number>`1`.as('one'));
  /** How many points there are: exact up to COUNT_EXACT_UP_TO, else PostgreSQL's estimate. */
  const total = () => tableCount(db, everyPoint);
  /** Up to `limit` rows of `query`, read one further to tell whether more follow. */
  async function withMore<R extends { device_id: string | null }>(
    query: (limit: number) => { execute(): Promise<R[]> },
    limit: number,
  ) {
    const rows = await query(limit + 1).execute();
    return { rows: rows.slice(0, limit).map(toGpsPoint), more: rows.length > limit };
  }
  const insertStatement = insertStatements(db);
  return {
    /**
     * A page of all points, newest first, and their total: exact up to COUNT_EXACT_UP_TO, else
     * PostgreSQL's estimate (platform/db/count.ts), so no page counts millions of points.
     */
    async page(limit: number, start: PageStart) {
      const [page, counted] = await Promise.all([withMore((n) => queries.page(n, start), limit), total()]);
      return { ...page, ...counted };
    },

    /**
     * A page of the points of these devices, each from its time on (see `windowPage`), and their total (exact
     * up to COUNT_EXACT_UP_TO, else PostgreSQL's estimate).
     */
    async windowsPage(limit: number, start: PageStart, windows: { deviceId: string; since: Date | null }[]) {
      if (windows.length === 0) return { rows: [], more: false, total: 0, estimated: false };
      const matching = db
        .selectFrom('gps_points')
        .select(sql<number>`1`.as('one'))
        .where((eb) =>
          eb.or(
            windows.map((w) =>
              w.since === null
                ? eb('device_id', '=', w.deviceId)
                : eb.and([eb('device_id', '=', w.deviceId), eb('timestamp', '>=', w.since)]),
            ),
          ),
        );
      const [page, counted] = await Promise.all([
        withMore((n) => queries.windowPage(n, start, windows), limit),
        cappedCount(db, matching),
      ]);
      return { ...page, ...counted };
    },

    /** A device's points in time order after a (timestamp, id) cursor: a range of its index, whatever the table size. */
    pointsSentByAfter: async (userId: string, after: RowKey | null, limit: number) =>
      (
        await startingAt(
          db.selectFrom('gps_points').select(GPS_COLUMNS).where('sent_by', '=', userId),
          after ? { after } : { offset: 0 },
          '>',
        )
          .orderBy('timestamp')
          .orderBy('id')
          .limit(limit)
          .execute()
      ).map(toGpsPoint),

    /**
     * A device's points that `userId` did not send (someone else did, or nobody) by time, then id, after a
     * (timestamp, id) cursor: one range of gps_points_device_time a batch (the personal data export of its owner).
     */
    pointsOfDeviceNotSentByAfter: async (deviceId: string, userId: string, after: RowKey | null, limit: number) =>
      (
        await startingAt(
          db
            .selectFrom('gps_points')
            .select(GPS_COLUMNS)
            .where('device_id', '=', deviceId)
            .where('sent_by', 'is distinct from', userId),
          after ? { after } : { offset: 0 },
          '>',
        )
          .orderBy('timestamp')
          .orderBy('id')
          .limit(limit)
          .execute()
      ).map(toGpsPoint),

    /**
     * A device's points in [from, to] by time, then id, after a (timestamp, id) cursor: one range of
     * gps_points_device_time a batch, however many points the device has (file export, import duplicates).
     */
    pointsOfDeviceAfter: async (
      deviceId: string,
      range: { from?: Date; to?: Date },
      after: RowKey | null,
      limit: number,
    ) => {
      let query = db.selectFrom('gps_points').select(GPS_COLUMNS).where('device_id', '=', deviceId);
      if (range.from) query = query.where('timestamp', '>=', range.from);
      if (range.to) query = query.where('timestamp', '<=', range.to);
      const rows = await startingAt(query, after ? { after } : { offset: 0 }, '>')
        .orderBy('timestamp')
        .orderBy('id')
        .limit(limit)
        .execute();
      return rows.map(toGpsPoint);
    },

    /** A page of a trip's points, oldest first, and whether more follow (the trip keeps their total). */
    pointsOfTrip: (tripId: string, limit: number, start: PageStart, since?: Date) =>
      withMore((n) => queries.tripPage(tripId, n, start, since), limit),

    /** How many of a trip's points are from `since` on (a grantee's window; the trip keeps the whole count). */
    async countOfTripSince(tripId: string, since: Date): Promise<number> {
      const row = await db
        .selectFrom('gps_points')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('trip_id', '=', tripId)
        .where('timestamp', '>=', since)
        .executeTakeFirstOrThrow();
      return Number(row.n);
    },

    /** The first `limit` points (by time) of each of these trips, in one query: one index range per trip. */
    async firstPointsOfTrips(tripIds: readonly string[], limit: number) {
      if (tripIds.length === 0) return [];
      const rows = await db
        .selectFrom(sql<{ trip_id: string }>`unnest(${[...tripIds]}::uuid[])`.as('trip_id'))
        .innerJoinLateral(
          (eb) =>
            eb
              .selectFrom('gps_points')
              .select(GPS_COLUMNS)
              .whereRef('gps_points.trip_id', '=', 'trip_id.trip_id')
              .orderBy('timestamp')
              .orderBy('id')
              .limit(limit)
              .as('point'),
          (join) => join.onTrue(),
        )
        .selectAll('point')
        .execute();
      return rows.map(toGpsPoint);
    },

    /** The number of points, for the public statistics (an estimate beyond COUNT_EXACT_UP_TO). */
    count: async () => (await total()).total,

    get: async (id: string) => {
      const row = await db.selectFrom('gps_points').select(GPS_COLUMNS).where('id', '=', id).executeTakeFirst();
      return row && toGpsPoint(row);
    },

    /**
     * A batch of points in one statement, so in one implicit transaction and one round trip, with one array
     * parameter per column (`unnest`). The points of a device join the trip `loggingTrip` finds for it, looked
     * up (and locked) once per device of the batch, in device order, so two batches (of this node or two) lock
     * the trips of their devices in the same order and cannot deadlock; the rows go in sorted by device and
     * time for the same reason (two batches holding the same points wait on each other's index entries in order). A point whose device, time and position are already stored (a client resending it, in this
     * batch or another, on this node or another) is not stored again: `on conflict do nothing` against
     * gps_points_same_fix. For each point, in the order given: the point stored for it, and whether it was there
     * before. With `readBack` (a single point's writer must answer a resend with the point stored first) the
     * stored point of a duplicate is read back, after the insert, so a concurrent batch's point is committed
     * by then; without it (a batch counts its duplicates) a duplicate's entry is undefined.
     */
    async insertMany(
      points: (NewGpsPoint & { id: string })[],
      loggingTrip: LoggingTripQuery | undefined,
      options: { readBack: boolean } = { readBack: true },
      /** The transaction to insert in (the point observer's), else on its own. */
      executor: Kysely<Schema> = db,
    ) {
      // In the order of gps_points_same_fix (device, time, position): two batches holding the same points wait on each other in one order.
      const rows = inFixOrder(points);
      const devices = new Set<string>();
      for (const row of rows) if (row.device_id !== null) devices.add(row.device_id);
      const columns = INSERTED_COLUMNS.filter(
        (column) => ALWAYS_SENT.has(column) || rows.some((row) => row[column] !== null),
      );
      const [result] = (await executor.executeQuery(insertStatement(loggingTrip, columns).filled([...devices], rows)))
        .rows;
      const tripOf = new Map((result?.trips ?? []).map((trip) => [trip.device_id, trip.trip_id]));
      const createdAt = result!.created_at;
      // Null: every point was stored.
      const storedIds = result!.stored === points.length ? null : new Set(result!.ids?.split(',') ?? []);
      const stored = points.map((point): StoredPoint | undefined => {
        if (storedIds && !storedIds.has(point.id)) return undefined;
        const tripId = point.device_id === null ? null : (tripOf.get(point.device_id) ?? null);
        return { point: toGpsPoint(storedRow(point, tripId, createdAt)), duplicate: false };
      });
      const resent = options.readBack && storedIds ? points.filter((point) => !storedIds.has(point.id)) : [];
      if (resent.length > 0) {
        const existing = new Map((await storedFixes(resent, executor)).map((row) => [fixKey(row), toGpsPoint(row)]));
        points.forEach((point, i) => {
          const found = stored[i] ? undefined : existing.get(fixKey(point));
          // Deleted between the insert and this read: nothing to answer with but the point as sent.
          if (found) stored[i] = { point: found, duplicate: true };
        });
      }
      return stored;
    },

    latest: async (deviceId?: string) => {
      const row = await queries.latest(deviceId).executeTakeFirst();
      return row && toGpsPoint(row);
    },

    /** By device id: sorted here rather than in SQL, one row per device, so the query stays one index probe per id. */
    async latestPerDevice(deviceIds: string[]) {
      if (deviceIds.length === 0) return [];
      const rows = await queries.latestPerDevice(deviceIds).execute();
      return rows.sort((a, b) => (a.device_id! < b.device_id! ? -1 : 1)).map(toGpsPoint);
    },

    /** Devices with points in the trip (read in the trip deletion's transaction, before the points lose it). */
    devicesOfTrip: async (trx: Kysely<Schema>, tripId: string): Promise<string[]> =>
      (
        await trx
          .selectFrom('gps_points')
          .select('device_id')
          .distinct()
          .where('trip_id', '=', tripId)
          .where('device_id', 'is not', null)
          .execute()
      ).map((row) => row.device_id!),

    /** How many points no longer name their sender. */
    async forgetSender(userId: string, trx: Kysely<Schema>): Promise<number> {
      const result = await trx
        .updateTable('gps_points')
        .set({ sent_by: null })
        .where('sent_by', '=', userId)
        .executeTakeFirst();
      return Number(result.numUpdatedRows);
    },

    /**
     * Deletes the points a file import stored on its device within its time range (see migration 0047), but those
     * of a trip; how many went.
     */
    async deleteImported(target: ImportedPoints): Promise<number> {
      const result = await db
        .deleteFrom('gps_points')
        .where((eb) => importedPoints(eb, target))
        .where('trip_id', 'is', null)
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },

    /** How many points of a file import are still stored (after `deleteImported`: those of trips). */
    async countImported(target: ImportedPoints): Promise<number> {
      const row = await db
        .selectFrom('gps_points')
        .where((eb) => importedPoints(eb, target))
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .executeTakeFirstOrThrow();
      return Number(row.n);
    },

    /** Deletes a point that no trip holds; reports what stood in the way otherwise. */
    async deleteUnlinked(id: string): Promise<'deleted' | 'missing' | 'linked'> {
      const result = await db
        .deleteFrom('gps_points')
        .where('id', '=', id)
        .where('trip_id', 'is', null)
        .returning('device_id')
        .executeTakeFirst();
      if (result) return 'deleted';
      const exists = await db
        .selectFrom('gps_points')
        .select(sql<number>`1`.as('one'))
        .where('id', '=', id)
        .executeTakeFirst();
      return exists ? 'linked' : 'missing';
    },
  };
}
