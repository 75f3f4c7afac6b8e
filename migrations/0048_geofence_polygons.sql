-- Geofence polygons and dwell times (issue 44). A geofence is a circle (the spec's latitude, longitude and
-- radius_km) or, with `polygon` set, a GeoJSON Polygon geometry (outer ring and holes, [longitude, latitude]
-- positions); for a polygon the circle fields hold its computed centre and enclosing radius, so clients that
-- know only circles still read valid values. The service checks the geometry (closed rings, ranges, at most
-- 1,000 positions); the table keeps the shape. dwell_minutes: a device inside this long fires geofence_dwell.
alter table geofences
  add column polygon jsonb check (polygon is null or (jsonb_typeof(polygon) = 'object' and polygon ->> 'type' = 'Polygon')),
  add column dwell_minutes integer check (dwell_minutes between 1 and 10080);
