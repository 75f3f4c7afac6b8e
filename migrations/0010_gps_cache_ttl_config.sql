-- How long the latest GPS point (overall and per device) stays in the key-value cache; every new point refreshes it.
insert into system_config (key, value, description) values
  ('gps.latest_cache_ttl_secs', '300', 'Seconds the latest GPS point (overall and per device) stays cached; every new point refreshes it')
on conflict (key) do nothing;
