import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { callerOf, requireOwnAccount, userIdOf } from '../../platform/auth/hooks.js';
import {
  created,
  errorResponses,
  ListEnvelope,
  offsetOf,
  PageEnvelope,
  PageQuery,
  paginated,
  requestUrl,
  single,
  SingleEnvelope,
} from '../../platform/http/envelopes.js';
import { AuthErrors } from '../../platform/http/errors.js';
import { IdParams } from '../../platform/http/schemas.js';
import { UserErrors } from '../users/errors.js';
import { GroupErrors as E } from './errors.js';
import {
  CreateGroupBody,
  Group,
  GroupInvitation,
  GroupInvitationParams,
  GroupMember,
  GroupParams,
  InviteBody,
  MemberParams,
  MyInvitation,
  UpdateGroupBody,
  UpdateMemberBody,
} from './schemas.js';
import { MAX_GROUPS_PER_USER, MAX_PENDING_INVITATIONS, type GroupsService } from './service.js';

const tags = ['Groups'];
const read = { auth: requireOwnAccount('groups:read') };
const write = { auth: requireOwnAccount('groups:write') };
const MEMBERS_ONLY = 'Members only: for anybody else the group does not exist (404 `group.not_found`).';
const ADMINS_ONLY = `${MEMBERS_ONLY} Other members get 403 \`group.admin_required\`.`;

const me = (request: FastifyRequest) => userIdOf(callerOf(request));

export async function groupRoutes(fastify: FastifyInstance, { groups }: { groups: GroupsService }): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/v1/groups',
    {
      config: read,
      schema: {
        tags,
        summary: 'The groups you are a member of, by name',
        querystring: PageQuery(20),
        response: { 200: PageEnvelope(Group), ...errorResponses(AuthErrors.user_required) },
      },
    },
    async (request) => {
      const { rows, total } = await groups.listOf(me(request), {
        limit: request.query.limit,
        offset: offsetOf(request.query),
      });
      return paginated(request, rows, total, request.query);
    },
  );

  app.post(
    '/v1/groups',
    {
      config: write,
      schema: {
        tags,
        summary: 'Create a group: you are its first member and admin',
        description: `A user belongs to at most ${MAX_GROUPS_PER_USER} groups (409 \`group.too_many_groups\`).`,
        body: CreateGroupBody,
        response: {
          201: SingleEnvelope(Group),
          ...errorResponses(AuthErrors.user_required, E.name_required, E.too_many_groups),
        },
      },
    },
    async (request, reply) =>
      created(request, reply, '/v1/groups', await groups.create(request, me(request), request.body)),
  );

  app.get(
    '/v1/groups/:id',
    {
      config: read,
      schema: {
        tags,
        summary: 'Get a group',
        description: MEMBERS_ONLY,
        params: IdParams,
        response: { 200: SingleEnvelope(Group), ...errorResponses(AuthErrors.user_required, E.not_found) },
      },
    },
    async (request) => single(request, await groups.get(me(request), request.params.id)),
  );

  app.patch(
    '/v1/groups/:id',
    {
      config: write,
      schema: {
        tags,
        summary: "Change a group's name or description",
        description: ADMINS_ONLY,
        params: IdParams,
        body: UpdateGroupBody,
        response: {
          200: SingleEnvelope(Group),
          ...errorResponses(AuthErrors.user_required, E.name_required, E.admin_required, E.not_found),
        },
      },
    },
    async (request) => single(request, await groups.update(request, me(request), request.params.id, request.body)),
  );

  app.delete(
    '/v1/groups/:id',
    {
      config: write,
      schema: {
        tags,
        summary: 'Delete a group, with its members, invitations and what is shared with it',
        description: ADMINS_ONLY,
        params: IdParams,
        response: { 204: Type.Null(), ...errorResponses(AuthErrors.user_required, E.admin_required, E.not_found) },
      },
    },
    async (request, reply) => {
      await groups.remove(request, me(request), request.params.id);
      return reply.status(204).send(null);
    },
  );

  app.get(
    '/v1/groups/:id/members',
    {
      config: read,
      schema: {
        tags,
        summary: "A group's members, longest-standing first",
        description: `${MEMBERS_ONLY} Members are named by username, never by email address.`,
        params: GroupParams,
        querystring: PageQuery(100),
        response: { 200: PageEnvelope(GroupMember), ...errorResponses(AuthErrors.user_required, E.not_found) },
      },
    },
    async (request) => {
      const { rows, total } = await groups.members(me(request), request.params.id, {
        limit: request.query.limit,
        offset: offsetOf(request.query),
      });
      return paginated(request, rows, total, request.query);
    },
  );

  app.patch(
    '/v1/groups/:id/members/:user_id',
    {
      config: write,
      schema: {
        tags,
        summary: 'Make a member an admin of the group, or not',
        description: `${ADMINS_ONLY} A group keeps at least one admin (409 \`group.last_admin\`).`,
        params: MemberParams,
        body: UpdateMemberBody,
        response: {
          200: SingleEnvelope(GroupMember),
          ...errorResponses(AuthErrors.user_required, E.admin_required, E.not_found, E.member_not_found, E.last_admin),
        },
      },
    },
    async (request) =>
      single(
        request,
        await groups.setAdmin(request, me(request), request.params.id, request.params.user_id, request.body.is_admin),
      ),
  );

  app.delete(
    '/v1/groups/:id/members/:user_id',
    {
      config: write,
      schema: {
        tags,
        summary: 'Leave a group (your own user id) or remove a member (admins)',
        description:
          `${MEMBERS_ONLY} Removing someone else takes an admin (403 \`group.admin_required\`). The last admin cannot ` +
          'leave while other members remain (409 `group.last_admin`): make another member admin first. The last ' +
          'member leaving deletes the group.',
        params: MemberParams,
        response: {
          204: Type.Null(),
          ...errorResponses(AuthErrors.user_required, E.admin_required, E.not_found, E.member_not_found, E.last_admin),
        },
      },
    },
    async (request, reply) => {
      await groups.removeMember(request, me(request), request.params.id, request.params.user_id);
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/v1/groups/:id/invitations',
    {
      config: write,
      schema: {
        tags,
        summary: 'Invite someone to the group by username or email address',
        description:
          `${ADMINS_ONLY} Exactly one of \`username\` and \`email\`. An address of a registered user invites that ` +
          'user; an address nobody has registered is mailed a link to sign up, and whoever registers with it and ' +
          'confirms it joins the group. The answer is the same either way and never says whether an address is ' +
          `registered. The invitation lasts 14 days; a group has at most ${MAX_PENDING_INVITATIONS} pending.`,
        params: GroupParams,
        body: InviteBody,
        response: {
          201: SingleEnvelope(GroupInvitation),
          ...errorResponses(
            AuthErrors.user_required,
            E.invitee_required,
            UserErrors.invalid_email,
            E.admin_required,
            E.not_found,
            E.invitee_not_found,
            E.already_member,
            E.invitation_pending,
            E.invitation_pending_email,
            E.too_many_invitations,
          ),
        },
      },
    },
    async (request, reply) => {
      const invitation = await groups.invite(request, me(request), request.params.id, request.body);
      return created(request, reply, `/v1/groups/${request.params.id}/invitations`, invitation);
    },
  );

  app.get(
    '/v1/groups/:id/invitations',
    {
      config: read,
      schema: {
        tags,
        summary: "The group's pending invitations, newest first",
        description: ADMINS_ONLY,
        params: GroupParams,
        response: {
          200: ListEnvelope(GroupInvitation),
          ...errorResponses(AuthErrors.user_required, E.admin_required, E.not_found),
        },
      },
    },
    async (request) => ({
      data: await groups.invitationsOf(me(request), request.params.id),
      _links: { self: requestUrl(request) },
    }),
  );

  app.delete(
    '/v1/groups/:id/invitations/:invitation_id',
    {
      config: write,
      schema: {
        tags,
        summary: 'Withdraw a pending invitation',
        description: ADMINS_ONLY,
        params: GroupInvitationParams,
        response: {
          204: Type.Null(),
          ...errorResponses(AuthErrors.user_required, E.admin_required, E.not_found, E.invitation_not_found),
        },
      },
    },
    async (request, reply) => {
      await groups.withdraw(request, me(request), request.params.id, request.params.invitation_id);
      return reply.status(204).send(null);
    },
  );

  app.get(
    '/v1/invitations',
    {
      config: read,
      schema: {
        tags,
        summary: 'Your pending invitations to groups, newest first',
        querystring: PageQuery(20),
        response: { 200: PageEnvelope(MyInvitation), ...errorResponses(AuthErrors.user_required) },
      },
    },
    async (request) => {
      const { rows, total } = await groups.invitationsTo(me(request), {
        limit: request.query.limit,
        offset: offsetOf(request.query),
      });
      return paginated(request, rows, total, request.query);
    },
  );

  const answerSchema = (summary: string) => ({
    tags,
    summary,
    description:
      "Your own invitations only: anybody else's is not found (404 `group.invitation_not_found`). An invitation " +
      'answered before answers 409 `group.invitation_answered`, one past its 14 days 409 `group.invitation_expired`.',
    params: IdParams,
    response: {
      200: SingleEnvelope(MyInvitation),
      ...errorResponses(
        AuthErrors.user_required,
        E.invitation_not_found,
        E.invitation_answered,
        E.invitation_expired,
        E.too_many_groups,
      ),
    },
  });

  app.post(
    '/v1/invitations/:id/accept',
    {
      config: write,
      schema: answerSchema(
        `Accept an invitation: you join the group (not as admin); at most ${MAX_GROUPS_PER_USER} groups`,
      ),
    },
    async (request) => single(request, await groups.accept(request, me(request), request.params.id)),
  );

  app.post(
    '/v1/invitations/:id/decline',
    { config: write, schema: answerSchema('Decline an invitation') },
    async (request) => single(request, await groups.decline(request, me(request), request.params.id)),
  );
}
