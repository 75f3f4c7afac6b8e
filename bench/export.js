// Personal data export of an account with many GPS points: time, archive size and peak RSS growth.
//   npm run bench:export                  (100,000 points; EXPORT_POINTS=… to change)
// In one process: the service on the embedded database, and a real HTTP client reading the archive off
// a socket and throwing it away. RSS is sampled every 5 ms; the growth is the peak during the export
// minus the RSS right before it. Goal: under 50 MB, whatever the number of points.
import { fillPoints, listeningService, measuredDownload, writeResult } from './lib.js';

const POINTS = Number(process.env.EXPORT_POINTS ?? 100_000);
const MB = 1024 * 1024;

const service = await listeningService('export');
const key = await service.call('POST', '/v1/api-keys', { name: 'tracker', scopes: [] });
const device = (await service.call('POST', '/v1/devices', { name: 'Boat', api_key_id: key.id })).data;
await fillPoints(service.database.db, device.id, POINTS, { sent_by: service.admin.userId });

const download = await measuredDownload(service.port, '/v1/user/export', service.admin.token);
const summary = {
  points: POINTS,
  status: download.status,
  archive_mb: +(download.bytes / MB).toFixed(2),
  seconds: +download.seconds.toFixed(2),
  points_per_second: Math.round(POINTS / download.seconds),
  rss_before_mb: +download.rssBeforeMb.toFixed(1),
  rss_peak_growth_mb: +download.rssGrowthMb.toFixed(1),
  goal_rss_growth_mb: 50,
};
console.log(summary);
writeResult('export', summary);
await service.close();
