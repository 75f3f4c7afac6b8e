-- Pre-seeded configuration. Entries are changed through PATCH /v1/system-config/{key}; none is created or deleted there.
insert into system_config (key, value, description) values
  ('trips.default_gps_logging', 'false', 'gps_logging_enabled of a new trip when the request does not say'),
  ('tracking.units', '"metric"', 'Units client apps show distances and speeds in: metric, imperial or nautical'),
  ('map.default_center', '{"latitude": 54.32, "longitude": 10.14, "zoom": 10}', 'Where client maps open when there is no position yet');
