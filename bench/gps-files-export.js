// GPS file export of one device with many points: time, file size and peak RSS growth per format.
//   npm run bench:gps-files                 (1,000,000 points; GPS_FILE_POINTS=… and GPS_FILE_FORMATS=gpx,csv to change)
// In one process: the service on the embedded database (DATABASE_URL=… for PostgreSQL), and a real HTTP
// client reading each file off a socket and throwing it away. RSS is sampled every 5 ms; the growth is the
// peak during a download minus the RSS right before it. Goal (issue 31): under 50 MB for 1,000,000 points.
import { fillPoints, listeningService, measuredDownload, writeResult } from './lib.js';

const POINTS = Number(process.env.GPS_FILE_POINTS ?? 1_000_000);
const FORMATS = (process.env.GPS_FILE_FORMATS ?? 'gpx,geojson,kml,csv').split(',');
const MB = 1024 * 1024;

const service = await listeningService('gps-files');
const device = (await service.call('POST', '/v1/devices', { name: 'Boat' })).data;
const filling = performance.now();
await fillPoints(service.database.db, device.id, POINTS, { altitude: 30, heading: 90, hdop: 0.8 });
console.log(`(${POINTS.toLocaleString('en')} points written in ${Math.round((performance.now() - filling) / 1000)} s)`);

const results = [];
for (const format of FORMATS) {
  const download = await measuredDownload(
    service.port,
    `/v1/gps/export?device_id=${device.id}&format=${format}`,
    service.admin.token,
  );
  const summary = {
    format,
    points: POINTS,
    status: download.status,
    file_mb: +(download.bytes / MB).toFixed(1),
    seconds: +download.seconds.toFixed(2),
    points_per_second: Math.round(POINTS / download.seconds),
    rss_peak_growth_mb: +download.rssGrowthMb.toFixed(1),
    goal_rss_growth_mb: 50,
  };
  console.log(summary);
  results.push(summary);
}
writeResult('gps-files-export', { results });
await service.close();
