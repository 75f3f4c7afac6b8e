-- The common social login providers, so POST /v1/users/oauth can succeed on a fresh install. They start
-- disabled: an operator turns each on (PATCH /v1/platforms/{slug}/enabled) once its OAuth app is set up.
insert into platforms (name, slug, is_oauth, enabled) values
  ('Google', 'google', true, false),
  ('GitHub', 'github', true, false),
  ('Discord', 'discord', true, false),
  ('Apple', 'apple', true, false),
  ('Microsoft', 'microsoft', true, false),
  ('Twitch', 'twitch', true, false)
on conflict (slug) do nothing;
