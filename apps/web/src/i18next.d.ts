import type analytics from '../public/locales/en/analytics.json';
import type audit from '../public/locales/en/audit.json';
import type auth from '../public/locales/en/auth.json';
import type common from '../public/locales/en/common.json';
import type dashboard from '../public/locales/en/dashboard.json';
import type groups from '../public/locales/en/groups.json';
import type logs from '../public/locales/en/logs.json';
import type market from '../public/locales/en/market.json';
import type preferences from '../public/locales/en/preferences.json';
import type profile from '../public/locales/en/profile.json';
import type services from '../public/locales/en/services.json';
import type users from '../public/locales/en/users.json';

// The English files are the source of truth for keys: every `t('…')` is checked against them at compile time,
// while the files themselves are still fetched at run time (only their types are imported here).
declare module 'i18next' {
  interface CustomTypeOptions {
    defaultNS: 'common';
    resources: {
      common: typeof common;
      auth: typeof auth;
      dashboard: typeof dashboard;
      services: typeof services;
      analytics: typeof analytics;
      profile: typeof profile;
      market: typeof market;
      users: typeof users;
      logs: typeof logs;
      audit: typeof audit;
      preferences: typeof preferences;
      groups: typeof groups;
    };
  }
}
