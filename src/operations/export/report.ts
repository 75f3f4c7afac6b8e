import PDFDocument from 'pdfkit';
import type { Writable } from 'node:stream';
import type { ExportTexts } from './texts.js';

export interface ReportFacts {
  username: string;
  exportedAt: Date;
  createdAt: Date;
  lastLoginAt: Date | null;
  privacyMode: boolean;
  roles: string[];
  twoFactor: { enabled: boolean; backupCodesRemaining: number };
  counts: {
    platformAccounts: number;
    sessions: number;
    apiKeys: number;
    integrations: number;
    devices: number;
    gpsPoints: number;
    ownedDevices: number;
    ownedDevicePoints: number;
    exports: number;
  };
}

const stamp = (date: Date) => date.toISOString().replace('T', ' ').slice(0, 16);

/** Writes report.pdf, a one-page summary of the export in the user's language, into `out`. */
export function writeReport(out: Writable, texts: ExportTexts, facts: ReportFacts): void {
  const doc = new PDFDocument({ size: 'A4', margin: 56, info: { Title: texts.title, Author: 'Waygate' } });
  doc.pipe(out);
  doc.font('Helvetica-Bold').fontSize(20).text(texts.title);
  doc
    .moveDown(0.5)
    .font('Helvetica')
    .fontSize(11)
    .text(texts.intro(facts.username, stamp(facts.exportedAt)));

  const section = (title: string, rows: [string, string | number][]) => {
    doc.moveDown(1).font('Helvetica-Bold').fontSize(13).text(title);
    doc.font('Helvetica').fontSize(11);
    for (const [label, value] of rows) doc.text(`${label}: ${value}`);
  };
  section(texts.account, [
    [texts.created, stamp(facts.createdAt)],
    [texts.lastLogin, facts.lastLoginAt ? stamp(facts.lastLoginAt) : texts.never],
    [texts.privacyMode, facts.privacyMode ? texts.yes : texts.no],
    [texts.roles, facts.roles.length ? facts.roles.join(', ') : texts.none],
    [texts.twoFactor, facts.twoFactor.enabled ? texts.twoFactorOn(facts.twoFactor.backupCodesRemaining) : texts.off],
  ]);
  section(texts.counts, [
    [texts.platformAccounts, facts.counts.platformAccounts],
    [texts.sessions, facts.counts.sessions],
    [texts.apiKeys, facts.counts.apiKeys],
    [texts.integrations, facts.counts.integrations],
    [texts.devices, facts.counts.devices],
    [texts.gpsPoints, facts.counts.gpsPoints],
    [texts.ownedDevices, facts.counts.ownedDevices],
    [texts.ownedDevicePoints, facts.counts.ownedDevicePoints],
    [texts.exports, facts.counts.exports],
  ]);
  doc.moveDown(1.5).fontSize(9).fillColor('#555555').text(texts.footer);
  doc.end();
}
