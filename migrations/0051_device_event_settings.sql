-- Per-device settings of the events (issue 44): a device that sends no point for offline_after_minutes is
-- offline (device_offline, then device_online with its next point); a point faster than speed_limit_kmh is an
-- overspeed. Null: no such event for the device.
alter table devices
  add column offline_after_minutes integer check (offline_after_minutes between 1 and 43200),
  add column speed_limit_kmh double precision check (speed_limit_kmh > 0 and speed_limit_kmh <= 2000);
