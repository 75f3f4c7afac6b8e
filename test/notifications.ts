import { randomUUID } from 'node:crypto';
import type { Notification } from '../src/operations/notifications/index.js';

/** A notification as the outbox would hand one to a sender: a geofence entered, with a link to the event. */
export function sampleNotification(overrides: Partial<Notification> = {}): Notification {
  return {
    id: `msg_${randomUUID()}`,
    type: 'geofence_enter',
    title: 'Van 3 entered Depot',
    body: 'Van 3 entered the geofence Depot (Hamburg).',
    url: 'https://waygate.example/events/3f1c',
    at: new Date('2026-11-29T14:02:00Z'),
    data: { device_id: 'd-3', geofence_id: 'g-1', latitude: 53.5438, longitude: 9.9661 },
    ...overrides,
  };
}
