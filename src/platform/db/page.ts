/** The sort key of a row in a list ordered by (time, id): where one page ends and the next begins. */
export interface RowKey {
  at: Date;
  id: string;
}

/**
 * Where a page starts in SQL: after a row's key (a `(time, id) > / <` range of the list's index, as cheap
 * on page 100,000 as on page 2), or `offset` rows in (cost grows with the offset: the rows skipped are read).
 */
export type PageStart = { after: RowKey } | { offset: number };
