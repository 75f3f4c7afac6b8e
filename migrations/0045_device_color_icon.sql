-- How a device is drawn on the map (issue 49): its colour (a CSS hex colour #rrggbb, kept in lower case; null: the
-- console picks one) and its icon. With a constant default PostgreSQL 11+ rewrites no rows.
alter table devices add column color text check (color ~ '^#[0-9a-f]{6}$');
alter table devices add column icon text not null default 'generic'
  check (icon in ('car', 'van', 'boat', 'person', 'bike', 'generic'));
