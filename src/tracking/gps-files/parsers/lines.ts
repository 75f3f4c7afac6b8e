/** A line longer than this is refused, not held: a file without line ends cannot fill the memory. */
export const MAX_LINE_CHARS = 64 * 1024;

export type Line = { number: number; text: string } | { number: number; tooLong: true };

/** The lines of a text stream (LF or CRLF), numbered from 1; an over-long line is reported and skipped. */
export async function* linesOf(text: AsyncIterable<string>): AsyncGenerator<Line> {
  let partial = '';
  let number = 0;
  let skipping = false;
  for await (const chunk of text) {
    let start = 0;
    for (let end = chunk.indexOf('\n'); end !== -1; end = chunk.indexOf('\n', start)) {
      const piece = chunk.slice(start, end);
      start = end + 1;
      number++;
      if (skipping || partial.length + piece.length > MAX_LINE_CHARS) yield { number, tooLong: true };
      else yield { number, text: (partial + piece).replace(/\r$/, '') };
      partial = '';
      skipping = false;
    }
    if (!skipping) {
      partial += chunk.slice(start);
      if (partial.length > MAX_LINE_CHARS) {
        skipping = true;
        partial = '';
      }
    }
  }
  if (skipping) yield { number: number + 1, tooLong: true };
  else if (partial !== '') yield { number: number + 1, text: partial.replace(/\r$/, '') };
}
