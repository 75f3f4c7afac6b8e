-- How long events are kept (issue 44): days, or null (the default) for ever, as gps.retention_days keeps points.
insert into system_config (key, value, description) values
  ('events.retention_days', 'null', 'Days events (geofence enter, exit, dwell, ...) are kept (null: for ever); applied daily by the job events-retention')
on conflict (key) do nothing;
