import { SaxesParser } from 'saxes';
import { ImportFailure, type Parsed } from './candidate.js';

/** What an XML format does with the parse: called for each element opened and closed, with its text. */
export interface XmlHandler {
  open(name: string, attributes: Record<string, string>, line: number): void;
  close(name: string, text: string, line: number): void;
}

/** The local part of a prefixed name (`gx:coord` → `coord`). */
const local = (name: string) => name.slice(name.indexOf(':') + 1);

/**
 * Streams XML through saxes: no DTD is read and no entity but XML's five is expanded (saxes knows no
 * others), and a DOCTYPE is refused outright, so no file can expand into more than it is. What the
 * handler finds (it pushes onto `out`) goes out after each chunk.
 */
export async function* parseXml(text: AsyncIterable<string>, handler: (out: Parsed[]) => XmlHandler): AsyncGenerator<Parsed> {
  const out: Parsed[] = [];
  const on = handler(out);
  const parser = new SaxesParser({ position: true });
  let texts: string[] = [];
  const stack: string[][] = [];
  parser.on('doctype', () => {
    throw new ImportFailure('doctype_refused', 'XML files with a DOCTYPE are refused (entity expansion)');
  });
  parser.on('error', (err) => {
    throw new ImportFailure('malformed_xml', `Not well-formed XML: ${err.message}`);
  });
  parser.on('opentag', (tag) => {
    stack.push(texts);
    texts = [];
    // Without xmlns processing, attributes are plain strings.
    on.open(local(tag.name), tag.attributes as Record<string, string>, parser.line);
  });
  parser.on('text', (chunk) => texts.push(chunk));
  parser.on('cdata', (chunk) => texts.push(chunk));
  parser.on('closetag', (tag) => {
    const own = texts.join('');
    texts = stack.pop() ?? [];
    on.close(local(tag.name), own, parser.line);
  });
  for await (const chunk of text) {
    parser.write(chunk);
    if (out.length > 0) yield* out.splice(0);
  }
  parser.close();
  yield* out.splice(0);
}
