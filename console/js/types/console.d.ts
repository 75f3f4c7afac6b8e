// Shapes the console's modules share (read by `npm run typecheck`; the browser loads plain JavaScript).

/** What the page at /console/ is given in its #console-config element (src/operations/console/routes.ts). */
export interface ConsoleConfig {
  tileUrl: string;
  tileAttribution: string;
  staleAfterSecs: number;
  locales: string[];
  publicUrl: string;
  assets: string;
  turnstileSiteKey?: string | null;
  /** REGISTRATION_ENABLED, the global sign-up switch (the email platform's own switches are public: GET /v1/platforms/email). */
  registration?: boolean;
}

/** The signed-in user (session.js). */
export interface Me {
  userId: string | null;
  username: string;
  locale: string | null;
  roles: string[];
  permissions: string[];
  isSuperAdmin: boolean;
}

/** What the shell gives each page's mount(). */
export interface PageContext {
  config: ConsoleConfig;
  me: Me;
  can: (permission: string) => boolean;
  /** Whether the user holds a tracking permission or its own-scope twin (`trips:write` or `trips:write_own`). */
  canTrack: (permission: string) => boolean;
  /** Whether the user may open the page at #/path (its permissions, as the navigation shows it). */
  opens: (path: string) => boolean;
}

/** A page: mounted into its root, answers what unmounts it (or nothing). */
export type Mount = (root: HTMLElement, context: PageContext) => Promise<(() => void) | void>;

/** A child h() appends: a node, a text (numbers as text), or nothing (null, undefined, false), or a list of them. */
export type Child = Node | string | number | null | undefined | false | Child[];

/** Attributes h() sets: on… names take listeners; true sets an empty attribute, false, null and undefined none. */
export type Attributes = { [name: string]: string | number | boolean | null | undefined | ((event: any) => unknown) };

/** The part of Cloudflare's Turnstile API (window.turnstile, once its script loaded) that turnstile.js uses. */
export interface Turnstile {
  render(
    element: HTMLElement,
    options: {
      sitekey: string;
      language: string;
      callback: (token: string) => void;
      'expired-callback': () => void;
      'error-callback': () => void;
    },
  ): string;
  reset(widget: string): void;
}

declare global {
  interface Window {
    turnstile?: Turnstile;
  }
}
