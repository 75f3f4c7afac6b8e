import { SaxesParser } from 'saxes';
import { ImportFailure, type Parsed } from './candidate.js';

/** What an XML format does with the parse: called for each element opened and closed, with its text. */
export interface XmlHandler {
  open(name: string, attributes: Record<string, string>, line: number): void;
  close(name: string, text: string, line: number): void;
}

/** Deeper than any track format nests (KML's Document/Folder/Placemark/MultiGeometry/Point is 7). */
export const MAX_XML_DEPTH = 64;
/**
 * The longest text, tag, comment, CDATA section or declaration a file may hold: saxes keeps each whole until
 * it ends, so one 300 MB text node would be 600 MB of memory. A track's longest piece (KML coordinates of a
 * long line) stays far below.
 */
export const MAX_XML_TOKEN_CHARS = 4 * 1024 * 1024;

const tooDeep = () => new ImportFailure('too_deep', `XML nested deeper than ${MAX_XML_DEPTH} elements`);
const tooLarge = () =>
  new ImportFailure(
    'element_too_large',
    `An XML element's text, tag or comment is longer than ${MAX_XML_TOKEN_CHARS} characters`,
  );

/** The local part of a prefixed name (`gx:coord` → `coord`). */
const local = (name: string) => name.slice(name.indexOf(':') + 1);

type Token = 'text' | 'open' | 'tag' | 'comment' | 'cdata' | 'pi' | 'decl';
const LT = 60,
  GT = 62,
  DASH = 45,
  BRACKET_CLOSE = 93,
  BRACKET_OPEN = 91,
  QUESTION = 63,
  QUOTE = 34,
  APOSTROPHE = 39;

/**
 * Follows the pieces of an XML stream (text, tags with their quoted values, comments, CDATA, processing
 * instructions, declarations) across chunks, a character at a time, and stops one longer than
 * MAX_XML_TOKEN_CHARS before the parser is given it.
 */
function tokenGuard() {
  let token: Token = 'text';
  let length = 0;
  /** After `<`, the characters seen so far, to tell a comment or CDATA from a tag. */
  let opening = '';
  let quote = 0;
  let prev = 0;
  let prev2 = 0;
  let brackets = 0;
  const end = () => ((token = 'text'), (length = 0));
  return (chunk: string) => {
    for (let i = 0; i < chunk.length; i++) {
      const c = chunk.charCodeAt(i);
      if (++length > MAX_XML_TOKEN_CHARS) throw tooLarge();
      if (token === 'text') {
        if (c === LT) ((token = 'open'), (opening = ''), (length = 1));
      } else if (token === 'open') {
        opening += chunk[i];
        if (opening === '!--') token = 'comment';
        else if (opening === '![CDATA[') token = 'cdata';
        else if (opening === '?') token = 'pi';
        else if (!'!--'.startsWith(opening) && !'![CDATA['.startsWith(opening)) {
          token = opening.startsWith('!') ? 'decl' : 'tag';
          quote = 0;
          brackets = 0;
          if (c === GT && token === 'tag') end();
        }
      } else if (token === 'tag') {
        if (quote !== 0) quote = c === quote ? 0 : quote;
        else if (c === QUOTE || c === APOSTROPHE) quote = c;
        else if (c === GT) end();
      } else if (token === 'comment') {
        if (c === GT && prev === DASH && prev2 === DASH) end();
      } else if (token === 'cdata') {
        if (c === GT && prev === BRACKET_CLOSE && prev2 === BRACKET_CLOSE) end();
      } else if (token === 'pi') {
        if (c === GT && prev === QUESTION) end();
      } else if (c === BRACKET_OPEN) brackets++;
      else if (c === BRACKET_CLOSE) brackets--;
      else if (c === GT && brackets <= 0) end();
      prev2 = prev;
      prev = c;
    }
  };
}

/**
 * Streams XML through saxes: no DTD is read and no entity but XML's five is expanded (saxes knows no
 * others), and a DOCTYPE is refused outright, so no file can expand into more than it is. Nesting is
 * bounded (MAX_XML_DEPTH), and so is every piece saxes holds (MAX_XML_TOKEN_CHARS); an element's own text
 * is kept only where the format reads it (`keepsText`). What the handler finds (it pushes onto `out`) goes
 * out after each chunk.
 */
export async function* parseXml(
  text: AsyncIterable<string>,
  keepsText: (name: string) => boolean,
  handler: (out: Parsed[]) => XmlHandler,
): AsyncGenerator<Parsed> {
  const out: Parsed[] = [];
  const on = handler(out);
  const parser = new SaxesParser({ position: true });
  const guard = tokenGuard();
  /** Per open element: its text so far, or null where the format does not read it. */
  const texts: ({ parts: string[]; length: number } | null)[] = [];
  parser.on('doctype', () => {
    throw new ImportFailure('doctype_refused', 'XML files with a DOCTYPE are refused (entity expansion)');
  });
  parser.on('error', (err) => {
    throw new ImportFailure('malformed_xml', `Not well-formed XML: ${err.message}`);
  });
  parser.on('opentag', (tag) => {
    if (texts.length >= MAX_XML_DEPTH) throw tooDeep();
    const name = local(tag.name);
    texts.push(keepsText(name) ? { parts: [], length: 0 } : null);
    // Without xmlns processing, attributes are plain strings.
    on.open(name, tag.attributes as Record<string, string>, parser.line + skippedLines);
  });
  const addText = (chunk: string) => {
    const own = texts.at(-1);
    if (!own) return;
    // Text pieces between comments or CDATA sections add up: bounded as one piece is.
    if ((own.length += chunk.length) > MAX_XML_TOKEN_CHARS) throw tooLarge();
    own.parts.push(chunk);
  };
  parser.on('text', addText);
  parser.on('cdata', addText);
  parser.on('closetag', (tag) => {
    const own = texts.pop()?.parts.join('') ?? '';
    on.close(local(tag.name), own, parser.line + skippedLines);
  });
  // Blank lines (or a byte order mark) before the XML declaration, which the sniffer passes over too.
  let skippedLines = 0;
  let started = false;
  for await (const read of text) {
    let chunk = read;
    if (!started) {
      chunk = read.replace(/^[\uFEFF\s]+/, '');
      // saxes counts lines from where it starts: the skipped ones are added to what the handler is told.
      for (let i = 0; i < read.length - chunk.length; i++) if (read.charCodeAt(i) === 10) skippedLines++;
      if (chunk === '') continue;
      started = true;
    }
    guard(chunk);
    parser.write(chunk);
    if (out.length > 0) yield* out.splice(0);
  }
  parser.close();
  yield* out.splice(0);
}
