import { Type } from 'typebox';
import { Body, named, Nullable } from '../../platform/http/schemas.js';

const fields = {
  speed_unit: Type.Union([Type.Literal('kmh'), Type.Literal('mph'), Type.Literal('knots')], {
    description: 'Speeds in km/h, miles per hour or knots (default kmh)',
  }),
  distance_unit: Type.Union([Type.Literal('km'), Type.Literal('mi'), Type.Literal('nmi')], {
    description: 'Distances in kilometres, miles or nautical miles (default km)',
  }),
  time_zone: Nullable(
    Type.String({
      minLength: 1,
      maxLength: 64,
      description: "An IANA time zone (Europe/Berlin); null: the browser's (the default)",
    }),
  ),
  coordinate_format: Type.Union([Type.Literal('decimal'), Type.Literal('dm'), Type.Literal('dms')], {
    description:
      'Decimal degrees (53.55012), degrees and decimal minutes (53° 33.007′), or degrees, minutes and seconds (53° 33′ 0.4″); default decimal',
  }),
};

export const Preferences = named(
  'UserPreferences',
  Type.Object(fields, { description: 'How the console shows speeds, distances, times and coordinates to this user' }),
);

export const PreferencesBody = Body(
  {
    speed_unit: Type.Optional(fields.speed_unit),
    distance_unit: Type.Optional(fields.distance_unit),
    time_zone: Type.Optional(fields.time_zone),
    coordinate_format: Type.Optional(fields.coordinate_format),
  },
  { atLeastOne: true, example: { speed_unit: 'knots', distance_unit: 'nmi', time_zone: 'Europe/Berlin' } },
);
