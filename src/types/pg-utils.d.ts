// node-postgres's conversion of a parameter value to what it sends (text, or a Buffer for bytea): the
// embedded database's driver sends values exactly as the PostgreSQL back end's does.
declare module 'pg/lib/utils.js' {
  const utils: { prepareValue(value: unknown): string | Buffer | null };
  export default utils;
}
