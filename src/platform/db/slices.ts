/**
 * PostgreSQL binds at most 65,535 parameters to one statement (a 16-bit count on the wire; more is refused, or on
 * the embedded back end misread). A multi-row insert takes one per column and row, so one of rows that can be
 * many (the events of a 10,000-point batch) is sent in slices that stay below it.
 */
export const MAX_PARAMETERS = 65_535;

/** `rows` in slices of at most `MAX_PARAMETERS / columns` rows, each sent by `send`, one after the other. */
export async function inSlices<T, R>(
  rows: readonly T[],
  columns: number,
  send: (slice: T[]) => Promise<R[]>,
): Promise<R[]> {
  const size = Math.max(1, Math.floor(MAX_PARAMETERS / columns));
  if (rows.length <= size) return rows.length > 0 ? send([...rows]) : [];
  const answers: R[] = [];
  for (let start = 0; start < rows.length; start += size)
    answers.push(...(await send(rows.slice(start, start + size))));
  return answers;
}
