/**
 * The one visibility rule of tracking (docs/access.md, "Self-service tracking"): what a caller may see and
 * change. A holder of the route's global permission (`gps:read`, ...) reaches every device, as the interface
 * spec says; anyone else reaches the devices they own and those shared with them, each at its level.
 */

export type ShareLevel = 'live' | 'history' | 'full';
/** What a user may do with one device: own it, or one of the share levels. */
export type AccessLevel = 'owner' | ShareLevel;

/** One reason a user reaches a device: ownership, or a share (to them, or to a group of theirs). */
export interface Grant {
  device_id: string;
  level: AccessLevel;
  /** Days of history a share shows (null: all of it). */
  history_days: number | null;
  /** Epoch ms the share ends (null: never). */
  expires_at: number | null;
  /** The device's owner, who shared it (null for the owner's own grant). */
  shared_by: string | null;
}

const RANK: Record<AccessLevel, number> = { live: 1, history: 2, full: 3, owner: 4 };
const DAY_MS = 86_400_000;

/** A list of grants grouped by device, and the span of time in which that grouping holds. */
interface Grouping {
  byDevice: ReadonlyMap<string, readonly Grant[]>;
  /** The keys of `byDevice`, made once. */
  deviceIds: readonly string[];
  /** Built at (epoch ms): a clock set back may bring back a grant left out as expired. */
  from: number;
  /** The first expiry after `from` (Infinity: none), when a grant drops out. */
  until: number;
}

/**
 * Groupings by grants list: a user's list is cached and asked on every request, so it is grouped once and
 * again only when one of its grants expires. The lists are never changed once loaded (a change loads anew).
 */
const groupings = new WeakMap<readonly Grant[], Grouping>();

function groupingOf(grants: readonly Grant[], nowMs: number): Grouping {
  const held = groupings.get(grants);
  if (held && held.from <= nowMs && nowMs < held.until) return held;
  const byDevice = new Map<string, Grant[]>();
  let until = Infinity;
  for (const grant of grants) {
    if (grant.expires_at !== null) {
      if (grant.expires_at <= nowMs) continue;
      until = Math.min(until, grant.expires_at);
    }
    const same = byDevice.get(grant.device_id);
    if (same) same.push(grant);
    else byDevice.set(grant.device_id, [grant]);
  }
  const grouping = { byDevice, deviceIds: Object.freeze([...byDevice.keys()]), from: nowMs, until };
  groupings.set(grants, grouping);
  return grouping;
}

/** What a user reaches at one moment: their grants, those expired left out. */
export class DeviceAccess {
  readonly #byDevice: ReadonlyMap<string, readonly Grant[]>;
  readonly #deviceIds: readonly string[];

  constructor(
    grants: readonly Grant[],
    readonly nowMs: number,
  ) {
    const grouping = groupingOf(grants, nowMs);
    this.#byDevice = grouping.byDevice;
    this.#deviceIds = grouping.deviceIds;
  }

  /** Every device reached, at any level (the same list each time: copy it to sort it). */
  deviceIds(): readonly string[] {
    return this.#deviceIds;
  }

  /** The devices reached at `level` or more (`full`: their trips are seen; `owner`: they may be changed). */
  deviceIdsAtLeast(level: AccessLevel): string[] {
    return this.deviceIds().filter((deviceId) => this.atLeast(deviceId, level));
  }

  /** The owners who share a device at `level` or more (`full`: their geofences are seen). */
  sharersAtLeast(level: AccessLevel): string[] {
    const sharers = new Set<string>();
    for (const grants of this.#byDevice.values())
      for (const grant of grants) if (grant.shared_by && RANK[grant.level] >= RANK[level]) sharers.add(grant.shared_by);
    return [...sharers];
  }

  /** The highest level of any grant on the device, or undefined when the device is not reached. */
  level(deviceId: string): AccessLevel | undefined {
    let best: AccessLevel | undefined;
    for (const grant of this.#byDevice.get(deviceId) ?? [])
      if (!best || RANK[grant.level] > RANK[best]) best = grant.level;
    return best;
  }

  /** At least `level` on the device (`owner` > `full` > `history` > `live`). */
  atLeast(deviceId: string, level: AccessLevel): boolean {
    const held = this.level(deviceId);
    return held !== undefined && RANK[held] >= RANK[level];
  }

  /**
   * The earliest time (epoch ms) of the device's points the user may read: null for all of them, undefined for
   * none (a device reached only live, or not at all). The widest of the grants counts.
   */
  pointsSince(deviceId: string): number | null | undefined {
    let since: number | null | undefined;
    for (const grant of this.#byDevice.get(deviceId) ?? []) {
      if (grant.level === 'live') continue;
      const from =
        grant.level === 'owner' || grant.history_days === null ? null : this.nowMs - grant.history_days * DAY_MS;
      if (from === null) return null;
      since = since === undefined || since === null ? from : Math.min(since, from);
    }
    return since;
  }

  /** Whether a point of the device at `timestampMs` may be read (the latest position too: see `seesLive`). */
  seesPoint(deviceId: string, timestampMs: number): boolean {
    const since = this.pointsSince(deviceId);
    return since === null || (since !== undefined && timestampMs >= since);
  }

  /** Whether the device's current position may be read (any level). */
  seesLive(deviceId: string): boolean {
    return this.#byDevice.has(deviceId);
  }

  /** The grants that reach the device, widest first (for "shared by whom, at what level, until when"). */
  grantsOf(deviceId: string): Grant[] {
    return [...(this.#byDevice.get(deviceId) ?? [])].sort((a, b) => RANK[b.level] - RANK[a.level]);
  }

  /** The same access narrowed to one device (an API key linked to it reaches no other). */
  only(deviceId: string): DeviceAccess {
    return new DeviceAccess(this.#byDevice.get(deviceId) ?? [], this.nowMs);
  }
}

/**
 * Whether a new point of the device goes to a live subscriber holding `grants`, at `nowMs` (an open WebSocket
 * keeps its grants, so expiry is judged at each delivery): any unexpired grant shows the device's new positions,
 * a history grant only those within its days (an imported old point is not live).
 */
export function seesNewPoint(grants: readonly Grant[], deviceId: string, timestampMs: number, nowMs: number): boolean {
  return grants.some(
    (grant) =>
      grant.device_id === deviceId &&
      (grant.expires_at === null || grant.expires_at > nowMs) &&
      (grant.level === 'owner' ||
        grant.level === 'live' ||
        grant.history_days === null ||
        timestampMs >= nowMs - grant.history_days * DAY_MS),
  );
}

/**
 * The scope a tracking route answers in: every device (the global permission), or what `access` reaches
 * for the user `userId`.
 */
export type TrackingScope = { all: true } | { all: false; userId: string; access: DeviceAccess };

export const EVERY_DEVICE: TrackingScope = { all: true };

/** The points filter of a scope for SQL: per device, the earliest readable time (null: all). */
export interface PointWindows {
  /** Devices whose every point may be read. */
  whole: string[];
  /** Devices of which points from a time on may be read. */
  from: { deviceId: string; since: Date }[];
}

export function pointWindows(access: DeviceAccess): PointWindows {
  const windows: PointWindows = { whole: [], from: [] };
  for (const deviceId of access.deviceIds()) {
    const since = access.pointsSince(deviceId);
    if (since === null) windows.whole.push(deviceId);
    else if (since !== undefined) windows.from.push({ deviceId, since: new Date(since) });
  }
  return windows;
}
