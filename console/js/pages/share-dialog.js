// @ts-check
import { all, ApiError, del, get, patch, post } from '../api.js';
import { announce, confirmingButton, errorBox, field, fieldProblem, h, messageOf, show } from '../dom.js';
import { t } from '../i18n.js';
import { dateValue, endOfDay, LEVELS, shareText } from '../shares.js';

/** @typedef {import('../shares.js').Share} Share */
/** @typedef {import('../shares.js').Level} Level */
/** @typedef {{ id: string, name: string }} Device */

/** The request field each refusal of the sharing routes is about (the others name theirs in the message). */
const FIELD_OF_CODE = /** @type {Record<string, string>} */ ({
  'sharing.unknown_grantee': 'grantee',
  'sharing.self_share': 'grantee',
  'sharing.not_a_member': 'grantee',
  'sharing.expired': 'expires_at',
});

/**
 * Shows an API refusal at the field it concerns (by its code, or the body field its message names, as a
 * validation message does: "body field 'history_days' must be >= 1"), else in `general`.
 * @param {unknown} err
 * @param {Record<string, HTMLElement | undefined>} fields
 * @param {HTMLElement} general
 */
function showRefusal(err, fields, general) {
  const code = err instanceof ApiError ? err.code : undefined;
  const named = /'(\w+)'/.exec(messageOf(err))?.[1];
  const input = (code && fields[FIELD_OF_CODE[code]]) || (named && fields[named]) || undefined;
  if (!input || input.hidden || input.parentElement?.hidden) return show(general, errorBox(err));
  fieldProblem(input, messageOf(err));
  input.focus();
}

/**
 * The level, days and end of a share, as labelled fields: the days only for history and full (live has none).
 * @param {Partial<Share>} [share] the values to start from
 */
function levelFields(share = {}) {
  const level = field(t('share.level'), { tag: 'select', name: 'level' });
  for (const [value, label] of LEVELS)
    level.input.append(h('option', { value, selected: value === (share.level ?? 'live') }, t(label)));
  const days = field(t('share.days'), {
    name: 'history_days',
    type: 'number',
    min: 1,
    max: 36500,
    step: 1,
    value: share.history_days ?? '',
  });
  const until = field(t('share.until'), {
    name: 'expires_at',
    type: 'date',
    min: dateValue(new Date().toISOString()),
    value: dateValue(share.expires_at ?? null),
  });
  const showDays = () => {
    days.wrapper.hidden = level.input.value === 'live';
  };
  level.input.addEventListener('change', showDays);
  showDays();
  const body = () => ({
    level: /** @type {Level} */ (level.input.value),
    history_days: level.input.value !== 'live' && days.input.value ? Number(days.input.value) : null,
    expires_at: endOfDay(until.input.value),
  });
  return {
    /** The level on a row of its own (its options say what each one shows), the days and the end on the next. */
    rows: [h('div', { class: 'row' }, level.wrapper), h('div', { class: 'row' }, days.wrapper, until.wrapper)],
    fields: { level: level.input, history_days: days.input, expires_at: until.input },
    level: level.input,
    body,
  };
}

/** Takes the problems shown at a form's fields away. @param {HTMLElement} form */
function clearProblems(form) {
  for (const input of form.querySelectorAll('[aria-invalid]')) if (input instanceof HTMLElement) fieldProblem(input);
}

/**
 * The sharing dialog of a device of the user's: whom it is shared with (GET /v1/devices/{id}/shares, which also
 * lists the owner's shares of every device), a new share with a username or one of the user's groups (POST), a
 * share's level, days and end changed (PATCH) or the share ended (DELETE). A modal <dialog>: focus stays in it,
 * Escape closes it, and the button that opened it has the focus again.
 * @param {Device} device
 * @param {{ groups: boolean, opener?: HTMLElement }} options `groups`: whether the user may read their groups
 */
export function openShareDialog(device, { groups, opener }) {
  const problem = h('div');
  const list = h('ul', { class: 'shares' });
  const adding = addForm(device, { groups, onShared: load });
  const close = h('button', { type: 'button', class: 'secondary' }, t('share.close'));
  const dialog = h(
    'dialog',
    { class: 'share-dialog', 'aria-labelledby': 'share-title' },
    h('div', { class: 'dialog-head' }, h('h2', { id: 'share-title' }, t('share.title', { name: device.name })), close),
    problem,
    h('section', { 'aria-labelledby': 'shares-title' }, h('h3', { id: 'shares-title' }, t('share.current')), list),
    adding.form,
  );
  close.addEventListener('click', () => dialog.close());
  dialog.addEventListener('close', () => {
    dialog.remove();
    opener?.focus();
  });
  document.body.append(dialog);
  dialog.showModal();
  adding.focus();

  async function load() {
    try {
      const { data } = await get(`/v1/devices/${device.id}/shares`);
      show(list, ...data.map((share) => row(share)));
      if (!data.length) show(list, h('li', { class: 'muted' }, t('share.none')));
    } catch (err) {
      show(problem, errorBox(err));
    }
  }

  /**
   * A share: whom with and how, with its buttons to change and to end it.
   * @param {Share} share
   * @returns {HTMLLIElement}
   */
  function row(share) {
    const grantee = share.group_id
      ? t('share.groupName', { name: share.grantee_name ?? '?' })
      : (share.grantee_name ?? '?');
    const edit = editForm(share, grantee);
    const change = h(
      'button',
      {
        type: 'button',
        class: 'secondary small',
        'aria-label': `${t('share.change')}: ${grantee}`,
        'aria-expanded': 'false',
        onclick: () => {
          edit.form.hidden = !edit.form.hidden;
          change.setAttribute('aria-expanded', String(!edit.form.hidden));
          if (!edit.form.hidden) edit.focus();
        },
      },
      t('share.change'),
    );
    const end = confirmingButton({
      label: t('share.end'),
      confirmLabel: t('share.endConfirm'),
      name: grantee,
      action: async () => {
        try {
          // A share of every device is ended as the owner's (/v1/shares/{id}), a device's through the device.
          await (share.device_id ? del(`/v1/devices/${device.id}/shares/${share.id}`) : del(`/v1/shares/${share.id}`));
          announce(t('share.ended', { name: grantee }));
          await load();
          adding.focus();
        } catch (err) {
          show(problem, errorBox(err));
        }
      },
    });
    end.classList.add('small');
    return h(
      'li',
      { class: 'share', 'data-share': share.id },
      h(
        'p',
        {},
        h('strong', {}, grantee),
        ' · ',
        shareText(share),
        share.device_id ? null : [' · ', t('share.everyDevice')],
      ),
      h('div', { class: 'actions' }, change, end),
      edit.form,
    );
  }

  /**
   * Changing a share: its level, days and end (PATCH).
   * @param {Share} share
   * @param {string} grantee
   */
  function editForm(share, grantee) {
    const values = levelFields(share);
    const general = h('div');
    const form = h(
      'form',
      { class: 'edit', hidden: true, 'aria-label': `${t('share.change')}: ${grantee}` },
      general,
      ...values.rows,
      h('div', { class: 'actions' }, h('button', { type: 'submit' }, t('save'))),
    );
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      clearProblems(form);
      show(general);
      try {
        const body = values.body();
        await (share.device_id
          ? patch(`/v1/devices/${device.id}/shares/${share.id}`, body)
          : patch(`/v1/shares/${share.id}`, body));
        announce(t('share.changed', { name: grantee }));
        await load();
        // The row is drawn anew: its first button (Change) has the focus, as the Save button had.
        /** @type {HTMLElement | null} */ (list.querySelector(`[data-share="${share.id}"] button`))?.focus();
      } catch (err) {
        showRefusal(err, values.fields, general);
      }
    });
    return { form, focus: () => values.fields.level.focus() };
  }

  load();
}

/**
 * Adding a share: with a person (their username) or one of the user's groups (GET /v1/groups), at a level, with
 * days of history and an end date when wanted. Sharing again with the same person changes their share.
 * @param {Device} device
 * @param {{ groups: boolean, onShared: () => Promise<void> }} options
 */
function addForm(device, { groups, onShared }) {
  const general = h('div');
  const grantee = field(t('share.with'), { tag: 'select', name: 'grantee' });
  grantee.input.append(h('option', { value: '' }, t('share.person')));
  const username = field(t('share.username'), {
    name: 'username',
    required: true,
    maxlength: 100,
    autocomplete: 'off',
    spellcheck: 'false',
  });
  const values = levelFields();
  const form = h(
    'form',
    { class: 'card add-share', 'aria-labelledby': 'share-add-title' },
    h('h3', { id: 'share-add-title' }, t('share.add')),
    general,
    h('div', { class: 'row' }, grantee.wrapper, username.wrapper),
    ...values.rows,
    h('button', { type: 'submit' }, t('share.submit')),
  );
  const toPerson = () => {
    const person = grantee.input.value === '';
    username.wrapper.hidden = !person;
    username.input.required = person;
    if (!person) fieldProblem(username.input);
  };
  grantee.input.addEventListener('change', toPerson);
  if (groups)
    all('/v1/groups')
      .then((mine) => {
        if (!mine.length) return;
        grantee.input.append(
          h(
            'optgroup',
            { label: t('share.myGroups') },
            ...mine.map((group) => h('option', { value: group.id }, t('share.groupName', { name: group.name }))),
          ),
        );
      })
      .catch((err) => show(general, errorBox(err)));

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearProblems(form);
    show(general);
    const group = grantee.input.value;
    const name = group ? (grantee.input.selectedOptions[0]?.textContent ?? '') : username.input.value.trim();
    try {
      await post(`/v1/devices/${device.id}/shares`, {
        ...(group ? { group_id: group } : { username: username.input.value.trim() }),
        ...values.body(),
      });
      // The next share starts afresh: live, no days, no end.
      form.reset();
      values.level.dispatchEvent(new Event('change'));
      toPerson();
      announce(t('share.shared', { name }));
      await onShared();
      username.input.focus();
    } catch (err) {
      const who = group ? grantee.input : username.input;
      showRefusal(err, { ...values.fields, grantee: who, username: username.input, group_id: grantee.input }, general);
    }
  });
  return { form, focus: () => (username.wrapper.hidden ? grantee.input : username.input).focus() };
}
