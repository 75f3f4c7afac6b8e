import type { TestApp } from './helpers.js';

/**
 * An event stored as the events module stores one, with its notification deliveries written in the same
 * transaction (the outbox's `prepare` before it and `write` in it, as the events module's hook calls them): for tests of the outbox that need
 * an event of a given type, time or details without driving points across a geofence.
 */
export async function recordTestEvent(
  t: TestApp,
  event: {
    type: 'geofence_enter' | 'geofence_exit' | 'device_offline' | 'overspeed' | 'low_battery' | 'sos';
    device_id: string;
    geofence_id?: string | null;
    geofence_owner_id?: string | null;
    occurred_at?: Date;
    details?: Record<string, unknown>;
  },
) {
  const writer = await t.app.services.notificationOutbox.prepare([event.device_id]);
  return t.app.database.db.transaction().execute(async (trx) => {
    const row = await trx
      .insertInto('events')
      .values({
        type: event.type,
        device_id: event.device_id,
        geofence_id: event.geofence_id ?? null,
        geofence_owner_id: event.geofence_owner_id ?? null,
        subject: `test:${Math.random()}`,
        occurred_at: event.occurred_at ?? t.clock.now(),
        latitude: 54.3,
        longitude: 10.1,
        details: JSON.stringify(event.details ?? {}),
      })
      .returning([
        'id',
        'type',
        'device_id',
        'geofence_id',
        'geofence_owner_id',
        'occurred_at',
        'latitude',
        'longitude',
        'details',
      ])
      .executeTakeFirstOrThrow();
    const deliveries = writer ? await writer.write(trx, [row]) : 0;
    return { ...row, deliveries };
  });
}
