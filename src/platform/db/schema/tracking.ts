import type { ColumnType, Generated } from 'kysely';
import type { CreatedAt, Id, JsonObject, UpdatedAt } from './columns.js';

export type TripStatus = 'draft' | 'active' | 'paused' | 'completed';

export type DeviceIcon = 'car' | 'van' | 'boat' | 'person' | 'bike' | 'generic';

export interface DevicesTable {
  id: Id;
  name: string;
  description: string | null;
  device_type: string | null;
  is_active: Generated<boolean>;
  /** Shown to anonymous subscribers of the vessels channel. */
  is_public: Generated<boolean>;
  /** `#rrggbb` in lower case; null: the console picks one. */
  color: string | null;
  icon: Generated<DeviceIcon>;
  api_key_id: string | null;
  /** The user the device belongs to (null: its owner was purged). */
  owner_id: string | null;
  /** Minutes without a point after which the device is offline (device_offline); null: never. */
  offline_after_minutes: number | null;
  /** km/h above which a point is an overspeed; null: no limit. */
  speed_limit_kmh: number | null;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

export type ShareLevel = 'live' | 'history' | 'full';

export interface DeviceSharesTable {
  id: Id;
  owner_id: string;
  /** null: every device of the owner. */
  device_id: string | null;
  user_id: string | null;
  group_id: string | null;
  level: ShareLevel;
  history_days: number | null;
  expires_at: Date | null;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

export interface GpsPointsTable {
  id: Id;
  device_id: string | null;
  trip_id: string | null;
  latitude: number;
  longitude: number;
  altitude: number | null;
  heading: number | null;
  timestamp: Date;
  /** The four speeds: all null when the device did not know its speed. */
  speed_kmh: number | null;
  speed_mps: number | null;
  speed_mph: number | null;
  speed_knots: number | null;
  pdop: number | null;
  hdop: number | null;
  vdop: number | null;
  /** Horizontal accuracy, metres. */
  accuracy: number | null;
  /** Battery charge, percent. */
  battery_level: number | null;
  charging: boolean | null;
  /** The activity the phone reported (walking, driving, …; several joined by commas). */
  motion: string | null;
  /** An alarm raised with the point (sos). */
  alarm: string | null;
  /** The user whose key or session posted the point (null: the system key, or before migration 0023). */
  sent_by: string | null;
  /** The file import that stored the point (migration 0047; null: not from a file, or stored before). */
  import_id: string | null;
  created_at: CreatedAt;
}

export type GpsImportStatus = 'running' | 'done' | 'failed';

export interface GpsImportsTable {
  id: Id;
  device_id: string;
  created_by: string | null;
  format: string;
  status: Generated<GpsImportStatus>;
  imported: Generated<number>;
  duplicates: Generated<number>;
  refused_count: Generated<number>;
  /** The first refusals: [{ at, reason }]. */
  refused: ColumnType<{ at: string; reason: string }[], string | undefined, string>;
  notes_count: Generated<number>;
  /** The first notes: [{ at, note }] (values left out of a stored point). */
  notes: ColumnType<{ at: string; note: string }[], string | undefined, string>;
  bytes_read: Generated<number>;
  bytes_total: number | null;
  error_code: string | null;
  error_message: string | null;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
  finished_at: Date | null;
  /** The time of the earliest and the latest point sent to be stored (null: none yet, or before migration 0047). */
  first_point_at: Date | null;
  last_point_at: Date | null;
  /** When its points were last removed (DELETE /v1/gps/imports/{id}/points), and how many in all. */
  reverted_at: Date | null;
  removed: Generated<number>;
}

export interface TripsTable {
  id: Id;
  name: string;
  description: string | null;
  status: Generated<TripStatus>;
  gps_logging_enabled: Generated<boolean>;
  device_id: string | null;
  /** The user who made the trip in their own scope (null: made with the global permission; docs/sharing.md). */
  owner_id: Generated<string | null>;
  category_id: string | null;
  origin_id: string | null;
  destination_id: string | null;
  weight_kg: number | null;
  notes: string | null;
  tags: Generated<string[]>;
  start_latitude: number | null;
  start_longitude: number | null;
  end_latitude: number | null;
  end_longitude: number | null;
  started_at: Date | null;
  ended_at: Date | null;
  /** Kept by the gps_points_count_trip_* triggers (one call per statement). */
  gps_point_count: ColumnType<number, never, never>;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

export interface TripStatusHistoryTable {
  id: Id;
  trip_id: string;
  old_status: TripStatus;
  new_status: TripStatus;
  changed_by: string | null;
  latitude: number | null;
  longitude: number | null;
  changed_at: CreatedAt;
}

export interface LocationsTable {
  id: Id;
  name: string;
  street: string | null;
  zip: string | null;
  city: string | null;
  country: string | null;
  latitude: number | null;
  longitude: number | null;
  notes: string | null;
  is_active: Generated<boolean>;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

export interface LocationContactsTable {
  id: Id;
  location_id: string;
  name: string;
  phone: string | null;
  email: string | null;
  role: string | null;
  created_at: CreatedAt;
}

export interface TripCategoriesTable {
  id: Id;
  parent_id: string | null;
  name: string;
  description: string | null;
  color: string | null;
  is_active: Generated<boolean>;
  sort_order: Generated<number>;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

export interface GeofencesTable {
  id: Id;
  name: string;
  description: string | null;
  latitude: number;
  longitude: number;
  radius_km: number;
  is_active: Generated<boolean>;
  metadata: JsonObject;
  /** A GeoJSON Polygon (null: a circle); read as the object, written as JSON text. */
  polygon: ColumnType<{ type: 'Polygon'; coordinates: number[][][] } | null, string | null | undefined, string | null>;
  /** Minutes inside after which geofence_dwell fires (null: never). */
  dwell_minutes: ColumnType<number | null, number | null | undefined, number | null>;
  /** The user who made the geofence in their own scope (null: instance-wide; docs/sharing.md). */
  owner_id: Generated<string | null>;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

export type EventType =
  | 'geofence_enter'
  | 'geofence_exit'
  | 'geofence_dwell'
  | 'device_offline'
  | 'device_online'
  | 'overspeed'
  | 'low_battery'
  | 'sos';

export interface EventsTable {
  id: Id;
  type: EventType;
  device_id: string;
  geofence_id: string | null;
  /** The geofence's owner (null: instance-wide, or no geofence): who may read the event besides the device's viewers. */
  geofence_owner_id: string | null;
  /** What makes the transition unique with device, type and time: the geofence's id, a region's name, or ''. */
  subject: Generated<string>;
  occurred_at: Date;
  source: Generated<'server' | 'device'>;
  latitude: number | null;
  longitude: number | null;
  details: JsonObject;
  created_at: CreatedAt;
}

export interface EventDeviceStateTable {
  device_id: string;
  last_point_at: Date | null;
}

export interface GeofencePresenceTable {
  device_id: string;
  geofence_id: string;
  inside: boolean;
  since: Date;
  last_point_at: Date;
  dwell_fired: Generated<boolean>;
}

export interface TripTemplatesTable {
  id: Id;
  name: string;
  description: string | null;
  category_id: string | null;
  origin_id: string | null;
  destination_id: string | null;
  device_id: string | null;
  gps_logging_enabled: Generated<boolean>;
  default_weight_kg: number | null;
  notes: string | null;
  tags: Generated<string[]>;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

export interface TrackingTables {
  /** Owner: tracking/devices. */
  devices: DevicesTable;
  /** Owner: tracking/sharing. */
  device_shares: DeviceSharesTable;
  /** Owner: tracking/gps. */
  gps_points: GpsPointsTable;
  /** Owner: tracking/gps-files. */
  gps_imports: GpsImportsTable;
  /** Owner: tracking/trips. */
  trips: TripsTable;
  trip_status_history: TripStatusHistoryTable;
  /** Owner: tracking/locations. */
  locations: LocationsTable;
  location_contacts: LocationContactsTable;
  /** Owner: tracking/trip-categories. */
  trip_categories: TripCategoriesTable;
  /** Owner: tracking/geofences. */
  geofences: GeofencesTable;
  /** Owner: tracking/trip-templates. */
  trip_templates: TripTemplatesTable;
  /** Owner: tracking/events. */
  events: EventsTable;
  /** Owner: tracking/events. */
  event_device_state: EventDeviceStateTable;
  /** Owner: tracking/events. */
  geofence_presence: GeofencePresenceTable;
}
