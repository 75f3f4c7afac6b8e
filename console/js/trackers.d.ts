// Types of trackers.js for the tests that import it (the console itself is plain JavaScript, not served this file).
export declare const INGEST_PATHS: { traccar: string; owntracks: string; overland: string };
export declare const GPSLOGGER_PARAMETERS: [name: string, placeholder: string][];
export declare function ingestUrls(base: string): { traccar: string; owntracks: string; overland: string };
export declare function gpsloggerUrl(base: string, key: string): string;
