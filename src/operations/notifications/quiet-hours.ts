/** Minutes since midnight of `at` on the wall clock of `timeZone` (UTC when null or unknown). */
function wallMinutes(at: Date, timeZone: string | null): number {
  let parts: Intl.DateTimeFormatPart[];
  try {
    parts = new Intl.DateTimeFormat('en-GB', {
      timeZone: timeZone ?? 'UTC',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      hourCycle: 'h23',
    }).formatToParts(at);
  } catch {
    return wallMinutes(at, 'UTC');
  }
  const part = (type: string) => Number(parts.find((p) => p.type === type)?.value ?? 0);
  return part('hour') * 60 + part('minute') + part('second') / 60;
}

const minutesOf = (clock: string) => Number(clock.slice(0, 2)) * 60 + Number(clock.slice(3, 5));

/**
 * When quiet hours `from`–`to` (HH:MM on the wall clock of `timeZone`; `to` before `from` spans midnight) that
 * hold `at` end, or null when `at` is outside them (equal `from` and `to`: none). A day's shift in the offset
 * (daylight saving) within the quiet hours moves the end by that shift at most.
 */
export function quietUntil(at: Date, quiet: { from: string; to: string }, timeZone: string | null): Date | null {
  const from = minutesOf(quiet.from);
  const to = minutesOf(quiet.to);
  if (from === to) return null;
  const now = wallMinutes(at, timeZone);
  const inside = from < to ? now >= from && now < to : now >= from || now < to;
  if (!inside) return null;
  const left = (to - now + 1440) % 1440;
  return new Date(at.getTime() + Math.round(left * 60_000));
}
