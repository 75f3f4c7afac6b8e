-- Whose geofence an event is of (issue 44): a user's geofence is private to them (and to those they share a device
-- with at level full), but its events are stored on the device, which others may see. Readers other than holders
-- of events:read see a geofence event only when they may read its geofence; the owner is kept on the event, so
-- the check needs no join (and an event of a deleted geofence stays private). A purged owner's events go with them.
alter table events add column geofence_owner_id uuid references users (id) on delete cascade;

update events set geofence_owner_id = geofences.owner_id from geofences where geofences.id = events.geofence_id;
