import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { DateTime } from '../../platform/http/schemas.js';
import type { StatsService } from './service.js';

const count = Type.Integer({ minimum: 0 });

const PublicStats = Type.Object({
  users: count,
  devices: count,
  trips: Type.Object({ draft: count, active: count, paused: count, completed: count, total: count }),
  gps_points: count,
  generated_at: DateTime,
});

export async function statsRoutes(app: FastifyInstance, { stats }: { stats: StatsService }): Promise<void> {
  app.get(
    '/v1/stats/public',
    {
      schema: {
        tags: ['Statistics'],
        summary: 'Public platform statistics (no credentials needed)',
        description:
          'Counts of users (not deleted), devices, trips by status and GPS points; recomputed at most once a minute.',
        response: { 200: PublicStats },
      },
    },
    async () => stats.publicStats(),
  );
}
