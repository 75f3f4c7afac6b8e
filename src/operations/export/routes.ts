import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { callerOf, requireOwnAccount } from '../../platform/auth/hooks.js';
import { errorResponses } from '../../platform/http/envelopes.js';
import { AuthErrors } from '../../platform/http/errors.js';
import { ExportErrors } from './errors.js';
import { ExportLogList, ExportLogsQuery, ZipFile } from './schemas.js';
import type { ExportService } from './service.js';

const tags = ['Personal data export'];

export async function exportRoutes(fastify: FastifyInstance, { exports }: { exports: ExportService }): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/v1/user/export',
    {
      config: { auth: requireOwnAccount('export:read') },
      schema: {
        tags,
        summary: 'Download everything the service holds about you, as a ZIP archive',
        description:
          'The archive service-data-export-{date}.zip holds data.json (camelCase; API keys by name and prefix only, ' +
          'never a key, hash or secret; also the devices reporting with your keys and the GPS points you sent, the devices ' +
          'you own and the points others sent to them), tracks.gpx (the points you sent as one GPX 1.1 track), report.pdf (a ' +
          'summary in your language) and README.txt. It is streamed as it is made. A failure before the first byte ' +
          'answers 500; one during the transfer cuts the connection, so a broken archive is never mistaken for a whole one.',
        response: {
          200: { description: 'The ZIP archive', content: { 'application/zip': { schema: ZipFile } } },
          ...errorResponses(AuthErrors.user_required, ExportErrors.failed),
        },
      },
    },
    async (request, reply) => {
      const { fileName, stream } = await exports.start(request, callerOf(request));
      return reply
        .header('content-type', 'application/zip')
        .header('content-disposition', `attachment; filename="${fileName}"`)
        .header('cache-control', 'no-store')
        .send(stream);
    },
  );

  app.get(
    '/v1/user/export/logs',
    {
      config: { auth: requireOwnAccount('export:read') },
      schema: {
        tags,
        summary: 'Your earlier exports, newest first',
        querystring: ExportLogsQuery,
        response: { 200: ExportLogList, ...errorResponses(AuthErrors.user_required) },
      },
    },
    async (request) => exports.logs(callerOf(request), request.query),
  );
}
