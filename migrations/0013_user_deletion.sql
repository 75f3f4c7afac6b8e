-- The purge finds users whose grace period is over, and pseudonymises the events by or about each.
create index users_deleted_at on users (deleted_at) where deleted_at is not null;
create index audit_events_actor on audit_events (actor_id) where actor_id is not null;
