import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unchecked, type Client } from '../../../test/client.js';
import { tokenFromMail, type FakeSmtp } from '../../../test/fakes/smtp.js';
import {
  buildMailingTestApp,
  createApiKey,
  createUser,
  forbidden,
  login,
  TEST_ADMIN,
  UNKNOWN_ID,
  type TestApp,
} from '../../../test/helpers.js';
import type { DomainEvents } from '../../platform/events.js';

const PUBLIC_URL = 'https://app.waygate.test';
const FRONTEND_URL = 'https://www.waygate.test';
const DAY = 86_400_000;

let t: TestApp;
let smtp: FakeSmtp;
let admin: Client;
/** The group events emitted, in order (what the tracking context hears). */
const heard: { name: string; groupId: string; userIds: string[] }[] = [];

beforeAll(async () => {
  ({ t, smtp } = await buildMailingTestApp({ config: { publicUrl: PUBLIC_URL, frontendUrl: FRONTEND_URL } }));
  // Stamps are compared exactly; time moves only when a test moves it.
  t.clock.freeze();
  admin = t.as(await login(t.app, 'admin', TEST_ADMIN.password));
  for (const node of t.nodes) {
    node.services.events.on(
      'group.members_changed',
      ({ groupId, userIds }: DomainEvents['group.members_changed']) =>
        void heard.push({ name: 'members_changed', groupId, userIds }),
    );
    node.services.events.on(
      'group.deleting',
      ({ groupId, memberIds }: DomainEvents['group.deleting']) =>
        void heard.push({ name: 'deleting', groupId, userIds: memberIds }),
    );
  }
});
afterAll(() => t.close());

const now = () => new Date(t.clock.nowMs()).toISOString();
const ID = expect.stringMatching(/^[0-9a-f-]{36}$/);

async function person() {
  const user = await createUser(t.app);
  return { ...user, email: `${user.username}@example.org`, api: t.as(user.token) };
}
type Person = Awaited<ReturnType<typeof person>>;

async function groupOf(owner: Person, name = 'Family') {
  return (await owner.api.post('/v1/groups', { name }).expect(201)).body.data;
}

async function inviteAndAccept(owner: Person, groupId: string, invitee: Person) {
  const invitation = (
    await owner.api.post(`/v1/groups/${groupId}/invitations`, { username: invitee.username }).expect(201)
  ).body.data;
  await invitee.api.post(`/v1/invitations/${invitation.id}/accept`).expect(200);
  return invitation;
}

const auditOf = (resourceId: string) =>
  t.database.db
    .selectFrom('audit_events')
    .select(['event_type', 'user_id', 'actor_id', 'resource_type', 'metadata'])
    .where('resource_id', '=', resourceId)
    .orderBy('created_at')
    .orderBy('event_type')
    .execute();

const NOT_FOUND = { error: 'NotFound', message: 'Group not found', code: 'group.not_found' };
const ADMIN_REQUIRED = {
  error: 'Forbidden',
  message: 'Only an admin of the group can do this',
  code: 'group.admin_required',
};
const LAST_ADMIN = {
  error: 'Conflict',
  message: 'The last admin cannot leave while other members remain; make another member admin first',
  code: 'group.last_admin',
};

describe('groups', () => {
  it('creates, lists, reads, changes and deletes a group; the creator is its first admin', async () => {
    const alice = await person();
    const created = await alice.api.post('/v1/groups', { name: '  Family ', description: 'Home' }).expect(201);
    const group = created.body.data;
    expect(created.body).toEqual({
      data: {
        id: ID,
        name: 'Family',
        description: 'Home',
        created_at: now(),
        updated_at: now(),
        member_count: 1,
        is_admin: true,
      },
      _links: { self: `${PUBLIC_URL}/v1/groups/${group.id}` },
    });
    expect(created.headers.location).toBe(`${PUBLIC_URL}/v1/groups/${group.id}`);

    expect((await alice.api.get('/v1/groups').expect(200)).body).toEqual({
      data: [group],
      pagination: { page: 1, limit: 20, total: 1, total_pages: 1 },
      _links: {
        self: `${PUBLIC_URL}/v1/groups?page=1&limit=20`,
        first: `${PUBLIC_URL}/v1/groups?page=1&limit=20`,
        last: `${PUBLIC_URL}/v1/groups?page=1&limit=20`,
      },
    });
    expect((await alice.api.get(`/v1/groups/${group.id}`).expect(200)).body).toEqual({
      data: group,
      _links: { self: `${PUBLIC_URL}/v1/groups/${group.id}` },
    });

    t.clock.advance(1000);
    const renamed = await alice.api.patch(`/v1/groups/${group.id}`, { name: 'The Millers', description: null });
    expect(renamed.body).toEqual({
      data: { ...group, name: 'The Millers', description: null, updated_at: now() },
      _links: { self: `${PUBLIC_URL}/v1/groups/${group.id}` },
    });
    expect((await alice.api.patch(`/v1/groups/${group.id}`, { name: '   ' }).expect(400)).body).toEqual({
      error: 'BadRequest',
      message: 'name must not be blank',
      code: 'group.name_required',
    });
    expect((await alice.api.post('/v1/groups', { name: 'x'.repeat(101) }).expect(400)).body).toEqual({
      error: 'BadRequest',
      message: "Body field 'name' must NOT have more than 100 characters",
      code: 'request.validation',
    });
    expect((await alice.api.patch(`/v1/groups/${group.id}`, unchecked({})).expect(400)).body.code).toBe(
      'request.validation',
    );

    await alice.api.delete(`/v1/groups/${group.id}`).expect(204);
    expect((await alice.api.get(`/v1/groups/${group.id}`).expect(404)).body).toEqual(NOT_FOUND);
    expect((await alice.api.get('/v1/groups').expect(200)).body.data).toEqual([]);
    expect(heard.filter((event) => event.groupId === group.id)).toEqual([
      { name: 'members_changed', groupId: group.id, userIds: [alice.id] },
      { name: 'deleting', groupId: group.id, userIds: [alice.id] },
      { name: 'members_changed', groupId: group.id, userIds: [alice.id] },
    ]);
    expect((await auditOf(group.id)).map((event) => [event.event_type, event.user_id, event.metadata])).toEqual([
      ['group_created', alice.id, { name: 'Family' }],
      ['group_updated', alice.id, { changed: ['name', 'description'] }],
      ['group_deleted', alice.id, { name: 'The Millers', members: 1 }],
    ]);
  });

  it('hides a group from everybody who is not a member (404, never 403) and keeps changes to its admins', async () => {
    const [alice, bob, stranger] = [await person(), await person(), await person()];
    const group = await groupOf(alice);
    const founded = now();
    t.clock.advance(1000);
    await inviteAndAccept(alice, group.id, bob);
    for (const answer of [
      await stranger.api.get(`/v1/groups/${group.id}`),
      await stranger.api.patch(`/v1/groups/${group.id}`, { name: 'Mine' }),
      await stranger.api.delete(`/v1/groups/${group.id}`),
      await stranger.api.get(`/v1/groups/${group.id}/members`),
      await stranger.api.delete(`/v1/groups/${group.id}/members/${alice.id}`),
      await stranger.api.patch(`/v1/groups/${group.id}/members/${stranger.id}`, { is_admin: true }),
      await stranger.api.post(`/v1/groups/${group.id}/invitations`, { username: stranger.username }),
      await stranger.api.get(`/v1/groups/${group.id}/invitations`),
      await alice.api.get(`/v1/groups/${UNKNOWN_ID}`),
    ]) {
      expect({ status: answer.status, body: answer.body }).toEqual({ status: 404, body: NOT_FOUND });
    }
    for (const answer of [
      await bob.api.patch(`/v1/groups/${group.id}`, { name: 'Mine' }),
      await bob.api.delete(`/v1/groups/${group.id}`),
      await bob.api.delete(`/v1/groups/${group.id}/members/${alice.id}`),
      await bob.api.patch(`/v1/groups/${group.id}/members/${bob.id}`, { is_admin: true }),
      await bob.api.post(`/v1/groups/${group.id}/invitations`, { username: stranger.username }),
      await bob.api.get(`/v1/groups/${group.id}/invitations`),
    ]) {
      expect({ status: answer.status, body: answer.body }).toEqual({ status: 403, body: ADMIN_REQUIRED });
    }
    expect((await bob.api.get(`/v1/groups/${group.id}`).expect(200)).body.data).toEqual({
      ...group,
      member_count: 2,
      is_admin: false,
    });
    expect((await bob.api.get(`/v1/groups/${group.id}/members`).expect(200)).body.data).toEqual([
      { user_id: alice.id, username: alice.username, is_admin: true, joined_at: founded },
      { user_id: bob.id, username: bob.username, is_admin: false, joined_at: now() },
    ]);
  });

  it('invites by username: the invitee is mailed, sees it, accepts and is a member (not admin)', async () => {
    const [alice, bob, carol] = [await person(), await person(), await person()];
    const group = await groupOf(alice);
    const sent = await alice.api
      .post(`/v1/groups/${group.id}/invitations`, { username: ` ${bob.username.toUpperCase()}` })
      .expect(201);
    const invitation = {
      id: ID,
      group_id: group.id,
      username: bob.username,
      email: null,
      invited_by: alice.id,
      created_at: now(),
      expires_at: new Date(t.clock.nowMs() + 14 * DAY).toISOString(),
      status: 'pending',
      answered_at: null,
    };
    const id = sent.body.data.id;
    expect(sent.body).toEqual({
      data: invitation,
      _links: { self: `${PUBLIC_URL}/v1/groups/${group.id}/invitations/${id}` },
    });

    const mail = await smtp.waitFor(bob.email);
    expect(mail.subject).toBe(`${alice.username} invited you to the group "Family" on Waygate`);
    expect(mail.text).toContain(`Hello ${bob.username},`);
    expect(mail.text).toContain(`Accept or decline the invitation here: ${FRONTEND_URL}/groups`);

    expect((await alice.api.get(`/v1/groups/${group.id}/invitations`).expect(200)).body).toEqual({
      data: [{ ...invitation, id }],
      _links: { self: `${PUBLIC_URL}/v1/groups/${group.id}/invitations` },
    });
    const mine = {
      id,
      group_id: group.id,
      group_name: 'Family',
      invited_by: alice.id,
      invited_by_username: alice.username,
      created_at: now(),
      expires_at: invitation.expires_at,
      status: 'pending',
      answered_at: null,
    };
    expect((await bob.api.get('/v1/invitations').expect(200)).body.data).toEqual([mine]);
    expect((await carol.api.get('/v1/invitations').expect(200)).body.data).toEqual([]);

    // Only the invitee answers: anybody else's invitation does not exist for them.
    expect((await carol.api.post(`/v1/invitations/${id}/accept`).expect(404)).body).toEqual({
      error: 'NotFound',
      message: 'Invitation not found',
      code: 'group.invitation_not_found',
    });
    expect((await alice.api.post(`/v1/invitations/${id}/decline`).expect(404)).body.code).toBe(
      'group.invitation_not_found',
    );

    t.clock.advance(1000);
    expect((await bob.api.post(`/v1/invitations/${id}/accept`).expect(200)).body).toEqual({
      data: { ...mine, status: 'accepted', answered_at: now() },
      _links: { self: `${PUBLIC_URL}/v1/invitations/${id}/accept` },
    });
    expect((await bob.api.get(`/v1/groups/${group.id}`).expect(200)).body.data).toMatchObject({
      member_count: 2,
      is_admin: false,
    });
    expect((await bob.api.get('/v1/invitations').expect(200)).body.data).toEqual([]);
    expect((await alice.api.get(`/v1/groups/${group.id}/invitations`).expect(200)).body.data).toEqual([]);
    expect((await bob.api.post(`/v1/invitations/${id}/decline`).expect(409)).body).toEqual({
      error: 'Conflict',
      message: 'The invitation was already answered',
      code: 'group.invitation_answered',
    });
    expect(heard.filter((event) => event.groupId === group.id).at(-1)).toEqual({
      name: 'members_changed',
      groupId: group.id,
      userIds: [bob.id],
    });
    const service = t.app.services.groups;
    expect(await service.memberIdsOf(group.id)).toEqual([alice.id, bob.id]);
    expect(await service.groupIdsOf(bob.id)).toEqual([group.id]);
    expect([await service.isMember(group.id, bob.id), await service.isMember(group.id, carol.id)]).toEqual([
      true,
      false,
    ]);

    expect(
      (await auditOf(id)).map((event) => [event.event_type, event.user_id, event.actor_id, event.metadata]),
    ).toEqual([
      ['group_invitation_sent', alice.id, alice.id, { group_id: group.id, by: 'username', invitee_id: bob.id }],
      ['group_invitation_accepted', bob.id, bob.id, { group_id: group.id }],
    ]);
  });

  it('refuses an invitation without exactly one invitee, to an unknown user, to a member and a second pending one', async () => {
    const [alice, bob, carol] = [await person(), await person(), await person()];
    const group = await groupOf(alice);
    await inviteAndAccept(alice, group.id, bob);
    const invite = (body: object) => alice.api.post(`/v1/groups/${group.id}/invitations`, unchecked(body));
    const refusals = [
      [{}, 400, 'group.invitee_required', 'Give exactly one of username and email'],
      [
        { username: carol.username, email: carol.email },
        400,
        'group.invitee_required',
        'Give exactly one of username and email',
      ],
      [{ email: 'not an address' }, 400, 'user.invalid_email', 'email is not a valid email address'],
      [{ username: 'nobody_here' }, 404, 'group.invitee_not_found', 'No user has this username'],
      [{ username: bob.username }, 409, 'group.already_member', 'The user is already a member of this group'],
    ] as const;
    const ERRORS = { 400: 'BadRequest', 404: 'NotFound', 409: 'Conflict' };
    for (const [body, status, code, message] of refusals) {
      const answer = await invite(body);
      expect({ status: answer.status, body: answer.body }).toEqual({
        status,
        body: { error: ERRORS[status], message, code },
      });
    }
    await invite({ username: carol.username }).expect(201);
    expect((await invite({ username: carol.username }).expect(409)).body).toEqual({
      error: 'Conflict',
      message: 'An invitation to this group is already pending for this invitee',
      code: 'group.invitation_pending',
    });
    await invite({ email: 'someone@example.net' }).expect(201);
    expect((await invite({ email: 'SOMEONE@example.net' }).expect(409)).body.code).toBe(
      'group.invitation_pending_email',
    );
  });

  it('is declined by the invitee, and withdrawn by an admin', async () => {
    const [alice, bob, carol] = [await person(), await person(), await person()];
    const group = await groupOf(alice);
    const toBob = (await alice.api.post(`/v1/groups/${group.id}/invitations`, { username: bob.username }).expect(201))
      .body.data;
    const toCarol = (
      await alice.api.post(`/v1/groups/${group.id}/invitations`, { username: carol.username }).expect(201)
    ).body.data;
    expect((await bob.api.post(`/v1/invitations/${toBob.id}/decline`).expect(200)).body.data).toMatchObject({
      status: 'declined',
      answered_at: now(),
    });
    expect((await bob.api.get(`/v1/groups/${group.id}`).expect(404)).body).toEqual(NOT_FOUND);
    await alice.api.delete(`/v1/groups/${group.id}/invitations/${toCarol.id}`).expect(204);
    expect((await carol.api.get('/v1/invitations').expect(200)).body.data).toEqual([]);
    expect((await carol.api.post(`/v1/invitations/${toCarol.id}/accept`).expect(404)).body.code).toBe(
      'group.invitation_not_found',
    );
    expect((await alice.api.delete(`/v1/groups/${group.id}/invitations/${toCarol.id}`).expect(404)).body.code).toBe(
      'group.invitation_not_found',
    );
    expect((await alice.api.get(`/v1/groups/${group.id}/invitations`).expect(200)).body.data).toEqual([]);
    expect((await auditOf(toBob.id)).map((event) => [event.event_type, event.user_id])).toEqual([
      ['group_invitation_sent', alice.id],
      ['group_invitation_declined', bob.id],
    ]);
    expect((await auditOf(toCarol.id)).map((event) => [event.event_type, event.user_id])).toEqual([
      ['group_invitation_sent', alice.id],
      ['group_invitation_withdrawn', alice.id],
    ]);
  });

  it('invites the registered user behind an address, answering exactly as for an address of nobody', async () => {
    const [alice, erin, member] = [await person(), await person(), await person()];
    const group = await groupOf(alice);
    await inviteAndAccept(alice, group.id, member);
    const invite = async (email: string) =>
      (await alice.api.post(`/v1/groups/${group.id}/invitations`, { email }).expect(201)).body.data;
    const mailsToMember = smtp.received.filter((received) => received.to === member.email).length;
    const toErin = await invite(erin.email.toUpperCase());
    const toNobody = await invite('Nobody.Yet@Example.net');
    const toMember = await invite(member.email);
    const shape = (email: string) => ({
      id: ID,
      group_id: group.id,
      username: null,
      email,
      invited_by: alice.id,
      created_at: now(),
      expires_at: new Date(t.clock.nowMs() + 14 * DAY).toISOString(),
      status: 'pending',
      answered_at: null,
    });
    expect([toErin, toNobody, toMember]).toEqual([
      shape(erin.email),
      shape('nobody.yet@example.net'),
      shape(member.email),
    ]);
    expect((await alice.api.get(`/v1/groups/${group.id}/invitations`).expect(200)).body.data).toHaveLength(3);
    // The inviter's own activity log does not say whose address it was either.
    expect((await auditOf(toErin.id))[0]!.metadata).toEqual({ group_id: group.id, by: 'email' });

    const mail = await smtp.waitFor(erin.email);
    expect(mail.subject).toBe(`${alice.username} invited you to the group "Family" on Waygate`);
    expect(mail.text).toContain(`Hello ${erin.username},`);
    const invitations = (await erin.api.get('/v1/invitations').expect(200)).body.data;
    expect(invitations).toEqual([
      expect.objectContaining({ id: toErin.id, group_name: 'Family', invited_by_username: alice.username }),
    ]);
    await erin.api.post(`/v1/invitations/${toErin.id}/accept`).expect(200);
    expect((await erin.api.get(`/v1/groups/${group.id}`).expect(200)).body.data.member_count).toBe(3);
    // A member invited by address is not mailed; accepting changes nothing.
    expect(smtp.received.filter((received) => received.to === member.email)).toHaveLength(mailsToMember);
    await member.api.post(`/v1/invitations/${toMember.id}/accept`).expect(200);
    expect((await member.api.get(`/v1/groups/${group.id}`).expect(200)).body.data).toMatchObject({
      member_count: 3,
      is_admin: false,
    });
  });

  it('mails an address of nobody a link to sign up; registering with it and confirming it joins the group', async () => {
    const alice = await person();
    await alice.api.patch(`/v1/users/${alice.id}/locale`, { locale: 'de' }).expect(200);
    const group = await groupOf(alice, 'Segelclub');
    const address = 'Grandma@Example.net';
    const invitation = (await alice.api.post(`/v1/groups/${group.id}/invitations`, { email: address }).expect(201)).body
      .data;
    const mail = await smtp.waitFor('grandma@example.net');
    // In the inviter's language (the invitee's is not known), addressed formally.
    expect(mail.subject).toBe(`${alice.username} hat Sie in die Gruppe „Segelclub“ auf Waygate eingeladen`);
    expect(mail.text).toContain(
      `Um beizutreten, legen Sie mit dieser E-Mail-Adresse (grandma@example.net) ein Konto an: ${FRONTEND_URL}/register?email=grandma%40example.net`,
    );

    const anon = t.as(null);
    await anon
      .post('/v1/auth/register', { email: address, username: 'grandma', password: 'long enough pw' })
      .expect(200);
    const token = tokenFromMail(await smtp.waitFor('grandma@example.net', (m) => m.subject.includes('Confirm')));
    t.clock.advance(1000);
    const signedIn = (await anon.post('/v1/auth/register/verify', { token }).expect(201)).body;
    const grandma = t.as(signedIn.session_token);
    expect((await grandma.get('/v1/groups').expect(200)).body.data).toEqual([
      { ...group, member_count: 2, is_admin: false },
    ]);
    expect((await grandma.get('/v1/invitations').expect(200)).body.data).toEqual([]);
    expect((await alice.api.get(`/v1/groups/${group.id}/invitations`).expect(200)).body.data).toEqual([]);
    expect((await auditOf(invitation.id)).map((event) => [event.event_type, event.user_id, event.metadata])).toEqual([
      ['group_invitation_sent', alice.id, { group_id: group.id, by: 'email' }],
      ['group_invitation_accepted', signedIn.user_id, { group_id: group.id, automatic: true }],
    ]);
    expect(heard.filter((event) => event.groupId === group.id).at(-1)).toEqual({
      name: 'members_changed',
      groupId: group.id,
      userIds: [signedIn.user_id],
    });
  });

  it('lets an invitation expire after 14 days; a new one may then be sent', async () => {
    const [alice, bob] = [await person(), await person()];
    const group = await groupOf(alice);
    const invite = () => alice.api.post(`/v1/groups/${group.id}/invitations`, { username: bob.username });
    const first = (await invite().expect(201)).body.data;
    t.clock.advance(14 * DAY);
    expect((await bob.api.post(`/v1/invitations/${first.id}/accept`).expect(409)).body).toEqual({
      error: 'Conflict',
      message: 'The invitation has expired; ask for a new one',
      code: 'group.invitation_expired',
    });
    expect((await bob.api.get('/v1/invitations').expect(200)).body.data).toEqual([]);
    expect((await alice.api.get(`/v1/groups/${group.id}/invitations`).expect(200)).body.data).toEqual([]);
    const second = (await invite().expect(201)).body.data;
    await bob.api.post(`/v1/invitations/${second.id}/accept`).expect(200);
    expect(
      await t.database.db
        .selectFrom('group_invitations')
        .select('status')
        .where('id', '=', first.id)
        .executeTakeFirst(),
    ).toEqual({ status: 'expired' });
  });

  it('keeps an admin: the last one cannot leave or step down while others remain; the last member leaving deletes it', async () => {
    const [alice, bob, carol] = [await person(), await person(), await person()];
    const group = await groupOf(alice);
    await inviteAndAccept(alice, group.id, bob);
    await inviteAndAccept(alice, group.id, carol);
    expect((await alice.api.delete(`/v1/groups/${group.id}/members/${alice.id}`).expect(409)).body).toEqual(LAST_ADMIN);
    expect(
      (await alice.api.patch(`/v1/groups/${group.id}/members/${alice.id}`, { is_admin: false }).expect(409)).body,
    ).toEqual(LAST_ADMIN);
    expect(
      (await alice.api.patch(`/v1/groups/${group.id}/members/${UNKNOWN_ID}`, { is_admin: true }).expect(404)).body,
    ).toEqual({
      error: 'NotFound',
      message: 'Not a member of this group',
      code: 'group.member_not_found',
    });
    expect(
      (await alice.api.patch(`/v1/groups/${group.id}/members/${bob.id}`, { is_admin: true }).expect(200)).body,
    ).toEqual({
      data: { user_id: bob.id, username: bob.username, is_admin: true, joined_at: now() },
      _links: { self: `${PUBLIC_URL}/v1/groups/${group.id}/members/${bob.id}` },
    });
    // An admin removes a member; a member leaves.
    await bob.api.delete(`/v1/groups/${group.id}/members/${carol.id}`).expect(204);
    expect((await carol.api.get(`/v1/groups/${group.id}`).expect(404)).body).toEqual(NOT_FOUND);
    await alice.api.delete(`/v1/groups/${group.id}/members/${alice.id}`).expect(204);
    expect((await bob.api.get(`/v1/groups/${group.id}`).expect(200)).body.data).toMatchObject({
      member_count: 1,
      is_admin: true,
    });
    await bob.api.delete(`/v1/groups/${group.id}/members/${bob.id}`).expect(204);
    expect(await t.database.db.selectFrom('groups').select('id').where('id', '=', group.id).execute()).toEqual([]);
    expect(heard.filter((event) => event.groupId === group.id).slice(-4)).toEqual([
      { name: 'members_changed', groupId: group.id, userIds: [carol.id] },
      { name: 'members_changed', groupId: group.id, userIds: [alice.id] },
      { name: 'deleting', groupId: group.id, userIds: [bob.id] },
      { name: 'members_changed', groupId: group.id, userIds: [bob.id] },
    ]);
    const events = (await auditOf(group.id)).filter((event) => event.event_type !== 'group_created');
    expect(events.map((event) => [event.event_type, event.user_id, event.actor_id])).toEqual([
      ['group_admin_changed', bob.id, alice.id],
      ['group_member_removed', carol.id, bob.id],
      ['group_member_left', alice.id, alice.id],
      ['group_deleted', bob.id, bob.id],
      ['group_member_left', bob.id, bob.id],
    ]);
  });

  it('bounds a user to 100 groups and a group to 50 pending invitations', async () => {
    const [alice, bob] = [await person(), await person()];
    const db = t.database.db;
    const at = new Date(t.clock.nowMs());
    const ids = await db
      .insertInto('groups')
      .values(Array.from({ length: 100 }, (_, i) => ({ name: `Group ${i}`, created_at: at, updated_at: at })))
      .returning('id')
      .execute();
    await db
      .insertInto('group_members')
      .values(ids.map(({ id }) => ({ group_id: id, user_id: alice.id, is_admin: true, joined_at: at })))
      .execute();
    expect((await alice.api.post('/v1/groups', { name: 'One more' }).expect(409)).body).toEqual({
      error: 'Conflict',
      message: 'A user belongs to at most 100 groups',
      code: 'group.too_many_groups',
    });
    expect((await alice.api.get('/v1/groups', { query: { page: 5, limit: 25 } }).expect(200)).body.pagination).toEqual({
      page: 5,
      limit: 25,
      total: 100,
      total_pages: 4,
    });

    const group = await groupOf(bob);
    const invitation = (
      await bob.api.post(`/v1/groups/${group.id}/invitations`, { username: alice.username }).expect(201)
    ).body.data;
    expect((await alice.api.post(`/v1/invitations/${invitation.id}/accept`).expect(409)).body.code).toBe(
      'group.too_many_groups',
    );
    await db
      .insertInto('group_invitations')
      .values(
        Array.from({ length: 49 }, (_, i) => ({
          group_id: group.id,
          email: `friend${i}@example.net`,
          created_at: at,
          expires_at: new Date(at.getTime() + DAY),
        })),
      )
      .execute();
    expect(
      (await bob.api.post(`/v1/groups/${group.id}/invitations`, { email: 'one@example.net' }).expect(409)).body,
    ).toEqual({
      error: 'Conflict',
      message: 'A group has at most 50 pending invitations; withdraw some first',
      code: 'group.too_many_invitations',
    });
  });

  it('needs groups:read or groups:write on an API key (a session needs neither)', async () => {
    const owner = await createUser(t.app, ['role_user', 'role_developer']);
    const group = (await t.as(owner.token).post('/v1/groups', { name: 'Keys' }).expect(201)).body.data;
    const keyWith = async (scopes: string[]) =>
      t.as((await createApiKey(t.app, owner.token, { name: 'k', scopes })).key);
    const none = await keyWith([]);
    expect((await none.get('/v1/groups').expect(403)).body).toEqual(forbidden('groups:read'));
    expect((await none.get(`/v1/groups/${group.id}/members`).expect(403)).body).toEqual(forbidden('groups:read'));
    const reader = await keyWith(['groups:read']);
    expect((await reader.get('/v1/groups').expect(200)).body.data).toEqual([group]);
    expect((await reader.post('/v1/groups', { name: 'Not by a reader' }).expect(403)).body).toEqual(
      forbidden('groups:write'),
    );
    expect((await reader.delete(`/v1/groups/${group.id}`).expect(403)).body).toEqual(forbidden('groups:write'));
    const writer = await keyWith(['groups:write']);
    await writer.post('/v1/groups', { name: 'By a key' }).expect(201);
    expect((await t.as(null).get('/v1/groups').expect(401)).body.code).toBe('auth.unauthorized');
  });

  it("hands a purged last admin's groups to the longest-standing member, and deletes the groups they were alone in", async () => {
    const [alice, bob, carol] = [await person(), await person(), await person()];
    const shared = await groupOf(alice, 'Shared');
    await inviteAndAccept(alice, shared.id, bob);
    t.clock.advance(1000);
    await inviteAndAccept(alice, shared.id, carol);
    const alone = await groupOf(alice, 'Alone');
    await admin.post(`/v1/admin/users/${alice.id}/force-delete`, { reason: 'asked to' }).expect(200);

    expect((await carol.api.get(`/v1/groups/${shared.id}/members`).expect(200)).body.data).toEqual([
      { user_id: bob.id, username: bob.username, is_admin: true, joined_at: expect.any(String) },
      { user_id: carol.id, username: carol.username, is_admin: false, joined_at: expect.any(String) },
    ]);
    expect(await t.database.db.selectFrom('groups').select('id').where('id', '=', alone.id).execute()).toEqual([]);
    expect(heard.filter((event) => event.groupId === alone.id).slice(-2)).toEqual([
      { name: 'deleting', groupId: alone.id, userIds: [alice.id] },
      { name: 'members_changed', groupId: alone.id, userIds: [alice.id] },
    ]);
    expect(heard.filter((event) => event.groupId === shared.id).at(-1)).toEqual({
      name: 'members_changed',
      groupId: shared.id,
      userIds: [alice.id],
    });
    const promoted = (await auditOf(shared.id)).filter((event) => event.event_type === 'group_admin_changed');
    expect(promoted).toEqual([
      {
        event_type: 'group_admin_changed',
        user_id: bob.id,
        actor_id: null,
        resource_type: 'group',
        metadata: { is_admin: true, reason: 'last_admin_purged' },
      },
    ]);
  });
});
