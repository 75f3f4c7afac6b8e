import { Type } from 'typebox';
import { DateTime, named, Nullable, uuid, Uuid } from '../../platform/http/schemas.js';
import { EXPORT_FORMATS } from './writers/index.js';

const format = Type.Optional(
  Type.Union(
    EXPORT_FORMATS.map((name) => Type.Literal(name)),
    {
      description: 'The file format; without it, the Accept header chooses (GPX for */* or none)',
    },
  ),
);

export const DeviceExportQuery = Type.Object(
  {
    device_id: Uuid,
    from: Type.Optional(
      Type.String({ format: 'date-time', description: 'Points at or after this time (default: the first)' }),
    ),
    to: Type.Optional(
      Type.String({ format: 'date-time', description: 'Points at or before this time (default: the last)' }),
    ),
    format,
  },
  {
    examples: [
      {
        device_id: '6f1c2b9e-8a43-4d7e-9b0a-2f5c1d3e4a51',
        from: '2026-01-01T00:00:00Z',
        to: '2026-01-31T23:59:59Z',
        format: 'gpx',
      },
    ],
  },
);

export const TripExportQuery = Type.Object({ format }, { examples: [{ format: 'geojson' }] });

/** A file as a download; the content type says which format. */
export const ExportFile = Type.String({ description: 'The file, streamed' });

export const IMPORT_FORMATS = ['gpx', 'kml', 'kmz', 'tcx', 'geojson', 'csv', 'owntracks', 'takeout'] as const;

export const ImportQuery = Type.Object(
  {
    device_id: Type.Optional(uuid({ description: 'Default: the device linked to the calling API key' })),
    format: Type.Optional(
      Type.Union(
        IMPORT_FORMATS.map((name) => Type.Literal(name)),
        {
          description:
            'gpx (1.0 and 1.1), kml, kmz (zipped KML), tcx (Garmin, Strava), geojson, csv, owntracks (Recorder .rec lines) or ' +
            'takeout (Records.json, Semantic Location History, Timeline.json or the iOS Google Maps export); ' +
            'without it, the content tells',
        },
      ),
    ),
  },
  { examples: [{ device_id: '6f1c2b9e-8a43-4d7e-9b0a-2f5c1d3e4a51', format: 'gpx' }] },
);

/**
 * The import's request body by content type, for the OpenAPI document: the file itself. Any content type is
 * taken (the format is named or sniffed, not read from it); these schemas describe and never refuse (the body
 * is a stream by the time they would run).
 */
const file = (description: string, example: unknown) => ({
  schema: Type.Unknown({ description, examples: [example] }),
});
export const ImportFileBody = {
  content: {
    'application/gpx+xml': file(
      'GPX 1.0 or 1.1 (trkpt, rtept, wpt with a time)',
      '<gpx version="1.1" creator="phone" xmlns="http://www.topografix.com/GPX/1/1"><trk><trkseg><trkpt lat="52.520008" lon="13.404954"><ele>34</ele><time>2024-05-01T08:00:00Z</time></trkpt></trkseg></trk></gpx>',
    ),
    'application/vnd.google-earth.kml+xml': file(
      'KML 2.2 (Placemarks with a TimeStamp, gx:Track)',
      '<kml xmlns="http://www.opengis.net/kml/2.2"><Placemark><TimeStamp><when>2024-05-01T08:00:00Z</when></TimeStamp><Point><coordinates>13.404954,52.520008,34</coordinates></Point></Placemark></kml>',
    ),
    'application/vnd.google-earth.kmz': file('KMZ: a zip whose first .kml document is read', 'PK…'),
    'application/vnd.garmin.tcx+xml': file(
      'TCX: Trackpoints with a Position of every Activity and Course',
      '<TrainingCenterDatabase xmlns="http://www.garmin.com/xmlschemas/TrainingCenterDatabase/v2"><Activities><Activity Sport="Running"><Lap StartTime="2024-05-01T08:00:00Z"><Track><Trackpoint><Time>2024-05-01T08:00:00Z</Time><Position><LatitudeDegrees>52.520008</LatitudeDegrees><LongitudeDegrees>13.404954</LongitudeDegrees></Position></Trackpoint></Track></Lap></Activity></Activities></TrainingCenterDatabase>',
    ),
    'application/geo+json': file('GeoJSON: Point features with a time property, LineStrings with coordTimes', {
      type: 'FeatureCollection',
      features: [
        {
          type: 'Feature',
          geometry: { type: 'Point', coordinates: [13.404954, 52.520008] },
          properties: { time: '2024-05-01T08:00:00Z' },
        },
      ],
    }),
    'text/csv': file(
      'CSV with a header naming time, latitude and longitude columns',
      'timestamp,latitude,longitude,altitude\n2024-05-01T08:00:00Z,52.520008,13.404954,34\n',
    ),
    'application/json': file('Google Takeout Records.json or Timeline.json, or GeoJSON', {
      locations: [{ latitudeE7: 525200080, longitudeE7: 134049540, timestamp: '2024-05-01T08:00:00Z' }],
    }),
    'application/octet-stream': file(
      'Any of the formats, e.g. OwnTracks Recorder .rec lines; format names it or the content tells',
      '2024-05-01T08:00:00Z\t*                 \t{"_type":"location","lat":52.520008,"lon":13.404954,"tst":1714550400}\n',
    ),
  },
};

export const MAX_REFUSALS_LISTED = 100;

const timeOrNull = (description: string) =>
  Nullable(Type.Unsafe<Date | string>({ type: 'string', format: 'date-time', description }));

export const GpsImport = named(
  'GpsImport',
  Type.Object({
    id: Uuid,
    device_id: Uuid,
    format: Type.String({ description: 'The format read (named or found in the content)' }),
    status: Type.Union([Type.Literal('running'), Type.Literal('done'), Type.Literal('failed')]),
    imported: Type.Integer({ description: 'Points stored' }),
    duplicates: Type.Integer({
      description: 'Points skipped: the device already has a point of that time and position',
    }),
    refused_count: Type.Integer({ description: 'Points or lines refused, all of them' }),
    refused: Type.Array(
      Type.Object({
        at: Type.String({ description: 'Where: a line, or an element and its index' }),
        reason: Type.String(),
      }),
      { description: `The first ${MAX_REFUSALS_LISTED} refusals` },
    ),
    notes_count: Type.Integer({
      description:
        'Values left out of a stored point (an unreadable or out-of-range speed, altitude, course or dilution), all of them',
    }),
    notes: Type.Array(
      Type.Object({
        at: Type.String({ description: 'Where: a line, or an element and its index' }),
        note: Type.String(),
      }),
      { description: `The first ${MAX_REFUSALS_LISTED} notes` },
    ),
    bytes_read: Type.Integer(),
    bytes_total: Nullable(Type.Integer()),
    error: Nullable(
      Type.Object({ code: Type.String(), message: Type.String() }, { description: 'Why a failed import stopped' }),
    ),
    created_by: Nullable(uuid({ description: 'Who started it (null: the system key, or a user since purged)' })),
    first_point_at: timeOrNull(
      'The time of its earliest point sent to be stored (null: none yet, or an import made before this was kept)',
    ),
    last_point_at: timeOrNull('The time of its latest point sent to be stored'),
    reverted_at: timeOrNull('When its points were last removed (DELETE /v1/gps/imports/{id}/points); null: never'),
    removed: Type.Integer({ description: 'Points of it removed so far' }),
    created_at: DateTime,
    finished_at: Nullable(DateTime),
  }),
);

export const ImportListQuery = Type.Object({
  device_id: Type.Optional(uuid({ description: 'Only the imports into this device' })),
  all: Type.Optional(
    Type.Boolean({ description: "Everyone's imports, not only yours: holders of gps:write only (default false)" }),
  ),
});

export const RevertedImport = Type.Object({
  removed: Type.Integer({ description: 'Points removed now' }),
  kept_in_trips: Type.Integer({
    description: 'Points of the import left in place because they belong to a trip (as DELETE /v1/gps/{id} keeps them)',
  }),
  import: GpsImport,
});
