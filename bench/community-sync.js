// A member sync of one large guild: time and peak RSS growth while the bot reports 100,000 members.
//   npm run bench:community             (COMMUNITY_MEMBERS=… to change)
// In one process: the service on the embedded database and a bot client over a real WebSocket, which
// generates each batch of 150 members when it sends it. Goal: memory that does not grow with the guild
// (the service stages batch by batch and never holds every member at once).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { buildApp } from '../dist/app.js';
import { loadConfig } from '../dist/config.js';
import { openKeyValueStore } from '../dist/platform/kv/index.js';
import { openMigratedDatabase } from '../dist/server.js';
import { BENCH_ADMIN, serviceEnv } from './service-env.js';

const MEMBERS = Number(process.env.COMMUNITY_MEMBERS ?? 100_000);
/** Members per SyncData message: a frame must stay under 64 KiB. */
const BATCH = 150;
const GUILD = '1234567890123456789';
const SYSTEM_KEY = 'wg_bench_system_key_0123456789abcdefghijklmnop';
const MB = 1024 * 1024;

const config = loadConfig({
  ...serviceEnv,
  SYSTEM_API_KEY: SYSTEM_KEY,
  DATA_DIR: mkdtempSync(join(tmpdir(), 'waygate-bench-community-')),
});
const { database } = await openMigratedDatabase(config);
const kv = await openKeyValueStore({ kind: 'memory' });
const app = await buildApp(config, { database, kv }, { logger: false });
const base = await app.listen({ host: '127.0.0.1', port: 0 });

const member = (n) => ({
  user_id: String(4234567890123456000n + BigInt(n)),
  username: `sailor${n}`,
  global_name: `Sailor ${n}`,
  discriminator: '0',
  avatar: 'a'.repeat(32),
  joined_at: '2026-01-01T00:00:00.000Z',
  roles: ['3234567890123456781', '3234567890123456782'],
});

const bot = new WebSocket(`${base.replace('http', 'ws')}/v1/ws`, {
  headers: { authorization: `Bearer ${SYSTEM_KEY}` },
});
const identified = new Promise((resolve) =>
  bot.on('message', (raw) => JSON.parse(raw.toString()).type === 'Identified' && resolve()),
);
// Listening before 'open': the Welcome can arrive in the same read as the handshake.
bot.on('message', (raw) => {
  const message = JSON.parse(raw.toString());
  if (message.type === 'Welcome') bot.send(JSON.stringify({ type: 'Identify', client: 'community_bot' }));
  if (message.type !== 'SyncRequest') return;
  const { requestId } = message;
  if (message.scope === 'guilds') {
    bot.send(
      JSON.stringify({
        type: 'SyncData',
        requestId,
        guilds: [{ guild_id: GUILD, name: 'Big Harbour', member_count: MEMBERS }],
        done: true,
      }),
    );
    return;
  }
  // As a bot should: the next batch once the previous one has left (the server's backpressure reaches us).
  const sendFrom = (at) => {
    const members = Array.from({ length: Math.min(BATCH, MEMBERS - at) }, (_, i) => member(at + i));
    const done = at + BATCH >= MEMBERS;
    bot.send(JSON.stringify({ type: 'SyncData', requestId, members, done }), () => done || sendFrom(at + BATCH));
  };
  sendFrom(0);
});

await new Promise((resolve, reject) => bot.once('open', resolve).once('error', reject));
await identified;

const call = async (method, url, token, payload) => {
  const response = await app.inject({
    method,
    url,
    headers: token ? { authorization: `Bearer ${token}` } : {},
    payload,
  });
  if (response.statusCode >= 300) throw new Error(`${method} ${url}: ${response.statusCode} ${response.body}`);
  return response.json();
};
const admin = (
  await call('POST', '/v1/auth/login', null, { identifier: BENCH_ADMIN.username, password: BENCH_ADMIN.password })
).session_token;
console.log('guild sync', await call('POST', '/v1/community/sync', admin, {}));

global.gc?.();
await new Promise((resolve) => setTimeout(resolve, 200));
const before = process.memoryUsage.rss();
const heapBefore = process.memoryUsage().heapUsed;
let peak = before;
let heapPeak = heapBefore;
const sampler = setInterval(() => {
  peak = Math.max(peak, process.memoryUsage.rss());
  heapPeak = Math.max(heapPeak, process.memoryUsage().heapUsed);
}, 5);
const began = performance.now();
const result = await call('POST', `/v1/community/guilds/${GUILD}/members/sync`, admin);
const seconds = (performance.now() - began) / 1000;
clearInterval(sampler);
console.log('member sync', result);
console.log(
  `${MEMBERS} members in ${seconds.toFixed(1)} s (${Math.round(MEMBERS / seconds)}/s); peak RSS growth ${((peak - before) / MB).toFixed(0)} MB, of the JavaScript heap ${((heapPeak - heapBefore) / MB).toFixed(0)} MB`,
);
bot.close();
await app.close();
await Promise.all([kv.close(), database.close()]);
