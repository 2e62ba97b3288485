import i18next, { type i18n, type Resource } from 'i18next';
import LanguageDetector from 'i18next-browser-languagedetector';
import HttpBackend from 'i18next-http-backend';

export const supportedLanguages = ['en', 'zh-CN'] as const;
export type Language = (typeof supportedLanguages)[number];

/** One namespace per area; each is a file under public/locales/{lng}/. */
export const namespaces = [
  'common',
  'auth',
  'dashboard',
  'services',
  'analytics',
  'profile',
  'market',
  'users',
  'logs',
  'audit',
  'preferences',
  'groups',
] as const;

export const LANGUAGE_STORAGE_KEY = 'i18nextLng';

/**
 * A ready i18next instance: the language comes from localStorage, then the browser (every zh-* resolves
 * to zh-CN, en-US … to en), else en; a change is stored under `i18nextLng`. Translations load from
 * /locales/{lng}/{ns}.json, unless `resources` are given (tests).
 */
export async function createI18n(resources?: Resource): Promise<i18n> {
  const instance = i18next.createInstance().use(LanguageDetector);
  if (!resources) instance.use(HttpBackend);
  instance.on('languageChanged', (lng) => {
    document.documentElement.lang = lng;
  });
  await instance.init({
    supportedLngs: [...supportedLanguages],
    fallbackLng: 'en',
    load: 'currentOnly',
    ns: [...namespaces],
    defaultNS: 'common',
    ...(resources ? { resources } : { backend: { loadPath: '/locales/{{lng}}/{{ns}}.json' } }),
    detection: {
      order: ['localStorage', 'navigator'],
      lookupLocalStorage: LANGUAGE_STORAGE_KEY,
      caches: ['localStorage'],
      // Any Chinese variant reads the Simplified translation better than the English fallback.
      convertDetectedLanguage: (lng: string) => (lng.toLowerCase().startsWith('zh') ? 'zh-CN' : lng),
    },
    // React escapes what it renders.
    interpolation: { escapeValue: false },
  });
  return instance;
}

export function currentLanguage(instance: i18n): Language {
  return instance.resolvedLanguage === 'zh-CN' ? 'zh-CN' : 'en';
}
