import type { Notification } from './senders/types.js';

/** The event as a delivery keeps it (the stored row's fields the notification needs). */
export interface DeliveryPayload {
  type: string;
  device_id: string;
  geofence_id: string | null;
  occurred_at: string;
  latitude: number | null;
  longitude: number | null;
  details: Record<string, unknown>;
}

const TITLES: Record<string, (device: string, place: string) => string> = {
  geofence_enter: (device, place) => `${device} entered ${place}`,
  geofence_exit: (device, place) => `${device} left ${place}`,
  geofence_dwell: (device, place) => `${device} is staying in ${place}`,
  device_offline: (device) => `${device} is offline`,
  device_online: (device) => `${device} is online again`,
  overspeed: (device) => `${device} is over its speed limit`,
  low_battery: (device) => `${device}'s battery is low`,
  sos: (device) => `SOS from ${device}`,
};

/** The notification of a delivery: its id (the same on every attempt), the texts, the event's data. */
export function notificationOf(
  deliveryId: string,
  eventId: string,
  payload: DeliveryPayload,
  deviceName: string | undefined,
  consoleUrl: string | undefined,
): Notification {
  const device = deviceName ?? 'A device';
  const place = typeof payload.details.geofence_name === 'string' ? payload.details.geofence_name : 'a geofence';
  const title = (TITLES[payload.type] ?? ((name: string) => `${name}: ${payload.type}`))(device, place);
  const position =
    payload.latitude !== null && payload.longitude !== null
      ? ` at ${payload.latitude.toFixed(5)}, ${payload.longitude.toFixed(5)}`
      : '';
  return {
    id: deliveryId,
    type: payload.type,
    title,
    body: `${title}${position}.`,
    at: new Date(payload.occurred_at),
    ...(consoleUrl ? { url: consoleUrl } : {}),
    data: { event_id: eventId, ...payload, device_name: deviceName ?? null },
  };
}
