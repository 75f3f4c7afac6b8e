import type { ColumnType, Generated } from 'kysely';
import type { CreatedAt, UpdatedAt } from '../platform/db/schema.js';

/** Kysely types of the tables behind locations, trip categories, geofences and trip templates. */

type Id = Generated<string>;

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
  /** Read as an object; written as JSON text. */
  metadata: ColumnType<Record<string, unknown>, string | undefined, string>;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
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
  locations: LocationsTable;
  location_contacts: LocationContactsTable;
  trip_categories: TripCategoriesTable;
  geofences: GeofencesTable;
  trip_templates: TripTemplatesTable;
}
