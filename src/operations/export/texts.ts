/** The words of report.pdf and README.txt, per language; a locale without a translation gets English. */
const EN = {
  title: 'Your personal data',
  intro: (username: string, at: string) => `Export for ${username}, made ${at} (UTC).`,
  account: 'Account',
  created: 'Created',
  lastLogin: 'Last sign-in',
  never: 'never',
  privacyMode: 'Privacy mode',
  yes: 'yes',
  no: 'no',
  roles: 'Roles',
  none: 'none',
  twoFactor: 'Two-factor authentication',
  twoFactorOn: (codes: number) => `on, ${codes} backup codes left`,
  off: 'off',
  counts: 'What the archive holds',
  platformAccounts: 'Sign-in accounts',
  sessions: 'Active sessions',
  apiKeys: 'API keys (names and prefixes only)',
  integrations: 'Streaming-platform integrations (without their tokens)',
  devices: 'Devices reporting with your keys',
  gpsPoints: 'GPS points you sent',
  ownedDevices: 'Devices you own',
  ownedDevicePoints: 'GPS points of your devices sent by others',
  exports: 'Earlier exports',
  footer: 'The complete data is in data.json, in the same archive.',
  readme: (at: string) =>
    `Personal data export, made ${at} (UTC).\n\n` +
    'data.json   everything the service holds about you, as JSON (camelCase keys). Secrets are never\n' +
    '            included: API keys appear with their name and prefix only, passwords, two-factor\n' +
    '            secrets and the tokens of your integrations not at all.\n' +
    'tracks.gpx  the GPS points you sent, as one GPX 1.1 track (for map and route tools).\n' +
    'report.pdf  a readable summary of the same data.\n' +
    'README.txt  this file.\n\n' +
    'The activity log of your account is not part of this file; you can read it at GET /v1/users/me/audit.\n',
};

export type ExportTexts = typeof EN;

const TEXTS: Record<string, ExportTexts> = {
  en: EN,
  de: {
    title: 'Ihre persönlichen Daten',
    intro: (username: string, at: string) => `Export für ${username}, erstellt ${at} (UTC).`,
    account: 'Konto',
    created: 'Angelegt',
    lastLogin: 'Letzte Anmeldung',
    never: 'nie',
    privacyMode: 'Privatsphäre-Modus',
    yes: 'ja',
    no: 'nein',
    roles: 'Rollen',
    none: 'keine',
    twoFactor: 'Zwei-Faktor-Authentifizierung',
    twoFactorOn: (codes: number) => `an, ${codes} Backup-Codes übrig`,
    off: 'aus',
    counts: 'Inhalt des Archivs',
    platformAccounts: 'Anmeldekonten',
    sessions: 'Aktive Sitzungen',
    apiKeys: 'API-Schlüssel (nur Namen und Präfixe)',
    integrations: 'Streaming-Plattform-Integrationen (ohne ihre Tokens)',
    devices: 'Geräte, die mit Ihren Schlüsseln melden',
    gpsPoints: 'Von Ihnen gesendete GPS-Punkte',
    ownedDevices: 'Ihre eigenen Geräte',
    ownedDevicePoints: 'Von anderen gesendete GPS-Punkte Ihrer Geräte',
    exports: 'Frühere Exporte',
    footer: 'Die vollständigen Daten stehen in data.json im selben Archiv.',
    readme: (at: string) =>
      `Export persönlicher Daten, erstellt ${at} (UTC).\n\n` +
      'data.json   alles, was der Dienst über Sie speichert, als JSON (Schlüssel in camelCase). Geheimnisse\n' +
      '            sind nie enthalten: API-Schlüssel nur mit Namen und Präfix, Passwörter,\n' +
      '            Zwei-Faktor-Geheimnisse und die Tokens Ihrer Integrationen gar nicht.\n' +
      'tracks.gpx  die von Ihnen gesendeten GPS-Punkte als ein GPX-1.1-Track (für Karten- und Routenprogramme).\n' +
      'report.pdf  eine lesbare Zusammenfassung derselben Daten.\n' +
      'README.txt  diese Datei.\n\n' +
      'Das Aktivitätsprotokoll Ihres Kontos ist nicht enthalten; Sie finden es unter GET /v1/users/me/audit.\n',
  },
};

export function exportTexts(locale: string): ExportTexts {
  return TEXTS[locale.slice(0, 2)] ?? EN;
}

/** The language the export is written in: the user's preferred one when translated, else English. */
export const exportLocale = (preferred: string | null) =>
  preferred && preferred.slice(0, 2) in TEXTS ? preferred.slice(0, 2) : 'en';
