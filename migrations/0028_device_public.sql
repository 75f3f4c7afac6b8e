-- Whether a device's live position goes to anyone: anonymous subscribers of the WebSocket `vessels` channel
-- see public devices only (every device was shown to anyone before). Off by default, so nothing becomes
-- visible that was not meant to be; with a constant default PostgreSQL 11+ rewrites no rows.
alter table devices add column is_public boolean not null default false;
