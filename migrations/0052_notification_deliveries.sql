-- The notification outbox (issue 44, item 6): an event's deliveries are written in the transaction that stores the
-- event, one per channel whatever number of rules match (unique event and channel), then sent by any node: a due row
-- is claimed (`for update skip locked`) and marked sending with a lease in next_attempt_at, so a node lost while
-- sending leaves a row another node claims once the lease is over. payload keeps what the notification says (the
-- event as it was stored), so sending reads no other table but the channel.
create table notification_deliveries (
  id uuid primary key default gen_random_uuid(),
  event_id uuid not null references events (id) on delete cascade,
  channel_id uuid not null references notification_channels (id) on delete cascade,
  rule_id uuid references notification_rules (id) on delete set null,
  user_id uuid not null references users (id) on delete cascade,
  payload jsonb not null check (jsonb_typeof(payload) = 'object'),
  status text not null default 'pending' check (status in ('pending', 'sending', 'sent', 'failed', 'gone')),
  attempts integer not null default 0,
  next_attempt_at timestamptz not null,
  give_up_at timestamptz not null,
  last_status integer,
  last_error text,
  sent_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  constraint notification_deliveries_once unique (event_id, channel_id)
);
create index notification_deliveries_due on notification_deliveries (next_attempt_at)
  where status in ('pending', 'sending');
create index notification_deliveries_user on notification_deliveries (user_id, created_at desc, id desc);
create index notification_deliveries_channel on notification_deliveries (channel_id, created_at desc);
