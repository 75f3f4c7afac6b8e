/**
 * The calendar day (YYYY-MM-DD) of an instant in a time zone (null: UTC): the day a person names a file by. A
 * user's time zone comes from their preferences; an export made at 00:30 in Berlin is named by that day, not
 * by the UTC day before it.
 */
export function dayIn(at: Date, timeZone: string | null): string {
  if (!timeZone) return at.toISOString().slice(0, 10);
  // en-CA writes dates as YYYY-MM-DD.
  return new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(at);
}
