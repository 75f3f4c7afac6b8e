// @ts-check
import { all, allDevices, ApiError, del, get, patch, post } from '../api.js';
import { announce, confirmingButton, errorBox, field, fieldProblem, h, messageOf, show } from '../dom.js';
import { formatDate, t } from '../i18n.js';
import { shareText } from '../shares.js';

/** @typedef {import('../types/routes').Schema<'Group'>} Group */
/** @typedef {import('../types/routes').Schema<'GroupMember'>} Member */
/** @typedef {import('../shares.js').Share} Share */

/**
 * Groups and sharing: the user's pending invitations (GET /v1/invitations) with Accept and Decline; their groups
 * (GET /v1/groups) with members, where an admin invites by username or email, withdraws an invitation, makes a member
 * admin and removes one, and every member leaves; a new group; and both sides of sharing: what is shared with the
 * user, by whom (GET /v1/shares?direction=incoming), and what they share with whom (outgoing), ended here too.
 * @param {HTMLElement} root
 * @param {import('../types/console').PageContext} context
 */
export async function mount(root, { me, can, canTrack }) {
  const problem = h('div');
  const invitations = h('ul', { class: 'invitations' });
  const invitationSection = h(
    'section',
    { 'aria-labelledby': 'invitations-title', hidden: true },
    h('h2', { id: 'invitations-title' }, t('groups.invitations')),
    invitations,
  );
  const groups = h('ul', { class: 'groups' });
  const creating = can('groups:write') ? createForm() : null;
  const incoming = h('ul', { class: 'share-list' });
  const outgoing = h('ul', { class: 'share-list' });
  const sharing = canTrack('devices:read')
    ? h(
        'section',
        { 'aria-labelledby': 'sharing-title' },
        h('h2', { id: 'sharing-title' }, t('share.overview')),
        h('h3', { id: 'incoming-title' }, t('share.incoming')),
        incoming,
        h('h3', { id: 'outgoing-title', tabindex: '-1' }, t('share.outgoing')),
        outgoing,
      )
    : null;
  show(
    root,
    h(
      'div',
      { class: 'page groups-page' },
      h('h1', {}, t('groups.title')),
      problem,
      invitationSection,
      h(
        'section',
        { 'aria-labelledby': 'groups-title' },
        h('h2', { id: 'groups-title', tabindex: '-1' }, t('groups.mine')),
        groups,
        creating?.form,
      ),
      sharing,
    ),
  );
  const fail = (/** @type {unknown} */ err) => show(problem, errorBox(err));

  /**
   * Reads the invitations and groups again and shows them; then the heading of `focusGroup` (a group just joined
   * or changed) or of the list has the focus, since the button that was pressed is gone with what it showed.
   * @param {string} [focusGroup]
   */
  async function load(focusGroup) {
    try {
      const [pending, mine] = await Promise.all([all('/v1/invitations'), all('/v1/groups')]);
      invitationSection.hidden = pending.length === 0;
      show(invitations, ...pending.map(invitation));
      const cards = await Promise.all(mine.sort((a, b) => a.name.localeCompare(b.name)).map(groupCard));
      show(groups, ...cards);
      if (!mine.length) show(groups, h('li', { class: 'muted' }, t('groups.none')));
    } catch (err) {
      fail(err);
    }
    /** @type {HTMLElement | null} */
    const heading = (focusGroup && groups.querySelector(`[data-group="${focusGroup}"] h3`)) || null;
    return heading;
  }

  /** @param {Promise<HTMLElement | null>} loading what load answers @param {HTMLElement} fallback */
  const focusAfter = async (loading, fallback) => ((await loading) ?? fallback).focus();
  const groupsTitle = /** @type {HTMLElement} */ (root.querySelector('#groups-title'));

  /** @param {import('../types/routes').Schema<'MyInvitation'>} invite */
  function invitation(invite) {
    /** @param {'accept' | 'decline'} answer */
    const answerWith = (answer) => async () => {
      try {
        await (answer === 'accept'
          ? post(`/v1/invitations/${invite.id}/accept`)
          : post(`/v1/invitations/${invite.id}/decline`));
        show(problem);
        announce(t(answer === 'accept' ? 'groups.joined' : 'groups.declined', { group: invite.group_name }));
        await focusAfter(load(answer === 'accept' ? invite.group_id : undefined), groupsTitle);
      } catch (err) {
        fail(err);
      }
    };
    return h(
      'li',
      { class: 'card', 'data-invitation': invite.id },
      h(
        'p',
        {},
        h('strong', {}, invite.group_name),
        ' · ',
        t('groups.invitedBy', { name: invite.invited_by_username ?? '?', date: formatDate(invite.expires_at) }),
      ),
      h(
        'div',
        { class: 'actions' },
        h(
          'button',
          {
            type: 'button',
            'aria-label': `${t('groups.accept')}: ${invite.group_name}`,
            onclick: answerWith('accept'),
          },
          t('groups.accept'),
        ),
        h(
          'button',
          {
            type: 'button',
            class: 'secondary',
            'aria-label': `${t('groups.decline')}: ${invite.group_name}`,
            onclick: answerWith('decline'),
          },
          t('groups.decline'),
        ),
      ),
    );
  }

  /**
   * A group with its members, and what the user may do there: leave; as its admin also invite, withdraw an
   * invitation, make a member admin, remove one, delete the group.
   * @param {Group} group
   */
  async function groupCard(group) {
    const [members, pending] = await Promise.all([
      all(`/v1/groups/${group.id}/members`),
      group.is_admin ? get(`/v1/groups/${group.id}/invitations`).then(({ data }) => data) : Promise.resolve([]),
    ]);
    const local = h('div');
    /** @param {() => Promise<unknown>} action @param {string} done what to announce */
    const act = (action, done) => async () => {
      try {
        await action();
        announce(done);
        await focusAfter(load(group.id), groupsTitle);
      } catch (err) {
        show(local, errorBox(err));
      }
    };
    const writable = can('groups:write');
    return h(
      'li',
      { class: 'card group', 'data-group': group.id },
      h('h3', { tabindex: '-1' }, group.name),
      group.description ? h('p', {}, group.description) : null,
      group.is_admin ? h('p', { class: 'muted' }, t('groups.youAdmin')) : null,
      local,
      h('h4', {}, t('groups.members', { count: group.member_count })),
      h('ul', { class: 'members' }, ...members.map((member) => memberItem(group, member, { act, writable }))),
      group.is_admin && writable ? inviteForm(group) : null,
      pending.length
        ? [
            h('h4', {}, t('groups.pending')),
            h(
              'ul',
              { class: 'members' },
              ...pending.map((invite) => {
                const who = invite.username ?? invite.email ?? '?';
                return h(
                  'li',
                  {},
                  h(
                    'span',
                    {},
                    who,
                    ' ',
                    h('span', { class: 'muted' }, t('groups.until', { date: formatDate(invite.expires_at) })),
                  ),
                  writable
                    ? h(
                        'button',
                        {
                          type: 'button',
                          class: 'secondary small',
                          'aria-label': `${t('groups.withdraw')}: ${who}`,
                          onclick: act(
                            () => del(`/v1/groups/${group.id}/invitations/${invite.id}`),
                            t('groups.withdrawn', { name: who }),
                          ),
                        },
                        t('groups.withdraw'),
                      )
                    : null,
                );
              }),
            ),
          ]
        : null,
      writable
        ? h(
            'div',
            { class: 'actions' },
            confirmingButton({
              label: t('groups.leave'),
              confirmLabel: t('groups.leaveConfirm'),
              name: group.name,
              action: act(
                () => del(`/v1/groups/${group.id}/members/${me.userId}`),
                t('groups.left', { group: group.name }),
              ),
            }),
            group.is_admin
              ? confirmingButton({
                  label: t('groups.delete'),
                  confirmLabel: t('groups.deleteConfirm'),
                  name: group.name,
                  action: act(() => del(`/v1/groups/${group.id}`), t('groups.deleted', { group: group.name })),
                })
              : null,
          )
        : null,
    );
  }

  /**
   * A member, marked admin and "you" in words; an admin of the group may make them admin or remove them.
   * @param {Group} group
   * @param {Member} member
   * @param {{ act: (action: () => Promise<unknown>, done: string) => () => Promise<void>, writable: boolean }} options
   */
  function memberItem(group, member, { act, writable }) {
    const self = member.user_id === me.userId;
    const marks = [member.is_admin ? t('groups.admin') : null, self ? t('groups.you') : null].filter(Boolean);
    const manage = group.is_admin && writable && !self;
    return h(
      'li',
      {},
      h('span', {}, member.username, marks.length ? h('span', { class: 'muted' }, ` (${marks.join(', ')})`) : null),
      manage && !member.is_admin
        ? h(
            'button',
            {
              type: 'button',
              class: 'secondary small',
              'aria-label': `${t('groups.makeAdmin')}: ${member.username}`,
              onclick: act(
                () => patch(`/v1/groups/${group.id}/members/${member.user_id}`, { is_admin: true }),
                t('groups.madeAdmin', { name: member.username }),
              ),
            },
            t('groups.makeAdmin'),
          )
        : null,
      manage
        ? confirmingButton({
            label: t('groups.remove'),
            confirmLabel: t('groups.removeConfirm'),
            name: member.username,
            action: act(
              () => del(`/v1/groups/${group.id}/members/${member.user_id}`),
              t('groups.removed', { name: member.username }),
            ),
          })
        : null,
    );
  }

  /**
   * Inviting someone by username, or by email address when what is typed has an @ (someone not registered yet gets a
   * mail with a link to sign up). The API's refusal is shown at the field.
   * @param {Group} group
   */
  function inviteForm(group) {
    const who = field(t('groups.invite'), { name: 'invitee', required: true, maxlength: 320, autocomplete: 'off' });
    const form = h(
      'form',
      { class: 'row invite', 'aria-label': `${t('groups.invite')}: ${group.name}` },
      who.wrapper,
      h('button', { type: 'submit' }, t('groups.inviteSubmit')),
    );
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      fieldProblem(who.input);
      const value = who.input.value.trim();
      if (!value) return who.input.focus();
      try {
        await post(`/v1/groups/${group.id}/invitations`, value.includes('@') ? { email: value } : { username: value });
        announce(t('groups.invited', { name: value }));
        await focusAfter(load(group.id), groupsTitle);
      } catch (err) {
        fieldProblem(who.input, messageOf(err));
        who.input.focus();
      }
    });
    return form;
  }

  /** A new group: its name and, when wanted, a description; the user is its first member and admin. */
  function createForm() {
    const name = field(t('groups.name'), { name: 'group-name', required: true, maxlength: 100 });
    const description = field(t('groups.description'), { name: 'group-description', maxlength: 1000 });
    const form = h(
      'form',
      { class: 'card', 'aria-labelledby': 'group-create-title' },
      h('h3', { id: 'group-create-title' }, t('groups.new')),
      h('div', { class: 'row' }, name.wrapper, description.wrapper),
      h('button', { type: 'submit' }, t('groups.create')),
    );
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      fieldProblem(name.input);
      show(problem);
      try {
        const { data } = await post('/v1/groups', {
          name: name.input.value.trim(),
          ...(description.input.value.trim() ? { description: description.input.value.trim() } : {}),
        });
        form.reset();
        announce(t('groups.created', { group: data.name }));
        await focusAfter(load(data.id), groupsTitle);
      } catch (err) {
        if (err instanceof ApiError && err.status === 400) {
          fieldProblem(name.input, messageOf(err));
          name.input.focus();
        } else fail(err);
      }
    });
    return { form };
  }

  /** Both sides of sharing, each share in words; the user's own shares can be ended here. */
  async function loadSharing() {
    if (!sharing) return;
    try {
      const [{ data: toMe }, { data: mine }] = await Promise.all([
        get('/v1/shares?direction=incoming'),
        get('/v1/shares?direction=outgoing'),
      ]);
      // Device names, only when some share names a device.
      const names = new Map(
        [...toMe, ...mine].some((share) => share.device_id)
          ? (await allDevices()).map((device) => [device.id, device.name])
          : [],
      );
      /** @param {Share} share @param {string} everything what a share of every device is called */
      const what = (share, everything) =>
        share.device_id ? (names.get(share.device_id) ?? t('map.unknown')) : everything;
      show(
        incoming,
        ...toMe.map((share) =>
          h(
            'li',
            {},
            h(
              'span',
              {},
              h('strong', {}, what(share, t('share.everyDeviceOf', { owner: share.owner_username ?? '?' }))),
              ' · ',
              t('share.byWhom', { owner: share.owner_username ?? '?', share: shareText(share) }),
            ),
          ),
        ),
      );
      if (!toMe.length) show(incoming, h('li', { class: 'muted' }, t('share.noneIncoming')));
      show(outgoing, ...mine.map((share) => outgoingItem(share, what(share, t('share.allMine')))));
      if (!mine.length) show(outgoing, h('li', { class: 'muted' }, t('share.noneOutgoing')));
    } catch (err) {
      fail(err);
    }
  }

  /** @param {Share} share @param {string} device its name */
  function outgoingItem(share, device) {
    const grantee = share.group_id
      ? t('share.groupName', { name: share.grantee_name ?? '?' })
      : (share.grantee_name ?? '?');
    return h(
      'li',
      {},
      h('span', {}, h('strong', {}, device), ' · ', t('share.withWhom', { name: grantee, share: shareText(share) })),
      canTrack('devices:write')
        ? confirmingButton({
            label: t('share.end'),
            confirmLabel: t('share.endConfirm'),
            name: `${device}, ${grantee}`,
            action: async () => {
              try {
                await del(`/v1/shares/${share.id}`);
                announce(t('share.ended', { name: grantee }));
                await loadSharing();
                /** @type {HTMLElement} */ (root.querySelector('#outgoing-title')).focus();
              } catch (err) {
                fail(err);
              }
            },
          })
        : null,
    );
  }

  await Promise.all([load(), loadSharing()]);
}
