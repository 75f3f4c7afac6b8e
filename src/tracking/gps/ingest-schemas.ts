import { Type } from 'typebox';

/** Text on the wire; read (and refused, naming the field) by trackers.ts, so an empty %HDOP is not a 0. */
const param = (description: string) => Type.Optional(Type.String({ description }));

const osmandParams = {
  id: param('Traccar device identifier: the API key (gps:write)'),
  deviceid: param('Alias of id'),
  key: param('The API key, where id is not used for it (GPSLogger)'),
  timestamp: param('Unix seconds, milliseconds, or ISO 8601 (without a zone: UTC); default now'),
  lat: param('Latitude, degrees'),
  lon: param('Longitude, degrees'),
  location: param('lat,lon in one parameter'),
  speed: param('Speed in knots (Traccar)'),
  speed_mps: param('Speed in m/s (GPSLogger %SPD)'),
  speed_kmh: param('Speed in km/h (GPSLogger %SPD_KPH)'),
  bearing: param('Course, degrees'),
  heading: param('Alias of bearing'),
  altitude: param('Metres'),
  accuracy: param('Horizontal accuracy, metres'),
  hdop: param('Horizontal dilution of precision'),
  batt: param('Battery, percent'),
  charge: param('true while charging'),
  alarm: param('An alarm, e.g. sos'),
};

export const OsmandQuery = Type.Object(osmandParams, { additionalProperties: true });

/** A Traccar Client 10.x form, or a 9.x JSON body ({ location, device_id }). */
const OsmandObject = Type.Object(
  {
    ...osmandParams,
    device_id: param('Traccar Client 9.x JSON: the device identifier, i.e. the API key'),
    location: Type.Optional(
      Type.Unknown({
        description:
          'Traccar Client 9.x JSON: { timestamp, coords { latitude, longitude, speed (m/s), heading, accuracy, altitude }, battery { level 0..1, is_charging }, activity { type } }; in a form: lat,lon',
      }),
    ),
  },
  { additionalProperties: true },
);

/** One position (form, query, 9.x JSON), or Traccar's opt-in JSON batch: an array of 9.x bodies or locations. */
export const OsmandBody = Type.Union(
  [
    OsmandObject,
    Type.Array(
      Type.Unknown({
        description: 'A 9.x body ({ location, device_id }) or a bare location ({ timestamp, coords, battery, … })',
      }),
      { maxItems: 1000 },
    ),
  ],
  {
    examples: [
      {
        id: 'wg_yourApiKey',
        lat: '52.520008',
        lon: '13.404954',
        timestamp: '1760000000',
        accuracy: '12.0',
        altitude: '34.0',
        speed: '5.83',
        bearing: '270.0',
        batt: '87',
        charge: 'false',
      },
    ],
  },
);

export const OwnTracksBody = Type.Union(
  [
    Type.Object(
      {
        _type: Type.Optional(
          Type.String({ description: 'location is stored; anything else is answered [] and not stored' }),
        ),
      },
      { additionalProperties: true },
    ),
    Type.Null({ description: 'An empty body (the app clearing a contact)' }),
  ],
  {
    examples: [
      {
        _type: 'location',
        lat: 48.856826,
        lon: 2.292713,
        tst: 1718369990,
        acc: 12,
        alt: 35,
        vel: 4,
        cog: 270,
        batt: 80,
        bs: 1,
        tid: 'p7',
      },
    ],
  },
);

export const OverlandBody = Type.Object(
  {
    locations: Type.Array(
      Type.Unknown({ description: 'A GeoJSON Feature with a Point geometry and properties.timestamp' }),
      { maxItems: 1000 },
    ),
    current: Type.Optional(Type.Unknown()),
    trip: Type.Optional(Type.Unknown()),
  },
  {
    additionalProperties: true,
    examples: [
      {
        locations: [
          {
            type: 'Feature',
            geometry: { type: 'Point', coordinates: [-122.0305811, 37.3318] },
            properties: {
              timestamp: '2024-10-01T15:00:00Z',
              altitude: 12,
              speed: 4,
              course: 90,
              horizontal_accuracy: 5,
              motion: ['driving'],
              battery_state: 'charging',
              battery_level: 0.8,
            },
          },
        ],
      },
    ],
  },
);
