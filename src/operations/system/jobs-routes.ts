import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { requirePermission } from '../../platform/auth/hooks.js';
import { errorResponses, ListEnvelope, single, SingleEnvelope } from '../../platform/http/envelopes.js';
import { RequestErrors } from '../../platform/http/errors.js';
import type { Scheduler } from '../../platform/scheduler.js';
import { JobErrors } from './errors.js';
import { Job, JobParams } from './schemas.js';

/**
 * The scheduled jobs, for admins: how each last ran, and running one now. The permissions are those of
 * the system config (settings:read to look, settings:write to run), whose values these jobs apply.
 */
export async function jobRoutes(fastify: FastifyInstance, { scheduler }: { scheduler: Scheduler }): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['System jobs'];

  app.get(
    '/v1/system/jobs',
    {
      config: { auth: requirePermission('settings:read') },
      schema: {
        tags,
        summary: 'The scheduled jobs, by name, with their last run',
        response: { 200: ListEnvelope(Job) },
      },
    },
    async (request) => single(request, await scheduler.list()),
  );

  app.post(
    '/v1/system/jobs/:name/run',
    {
      config: { auth: requirePermission('settings:write') },
      schema: {
        tags,
        summary: 'Run a job now',
        description:
          'Runs the job on this node and answers when it has finished, with its record (a failed run is 200 with last_outcome "failed"). ' +
          'Still once across nodes: 409 job.running while it runs anywhere. The periodic schedule is unchanged.',
        params: JobParams,
        response: {
          200: SingleEnvelope(Job),
          ...errorResponses(RequestErrors.validation, JobErrors.not_found, JobErrors.running),
        },
      },
    },
    async (request) => {
      const status = await scheduler.runNow(request.params.name);
      if (status === 'unknown') throw JobErrors.not_found(`No scheduled job is named '${request.params.name}'`);
      if (status === 'running') throw JobErrors.running();
      return single(request, status);
    },
  );
}
