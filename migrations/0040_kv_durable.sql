-- Security state that must outlive a restart when there is no Redis (sign-in locks and their failure counts,
-- replay markers of signed, stateless tokens): the in-process store forgets everything when the process stops,
-- so a restart would lift every lock and let a used nonce pass again. With Redis these keys live in Redis.
-- Rows are read only while live (expires_at after the service's clock); the hourly purge-expired job deletes the rest.
create table kv_durable (
  key text primary key,
  value text not null,
  -- null: kept until deleted.
  expires_at timestamptz
);
create index kv_durable_expires_at on kv_durable (expires_at);
