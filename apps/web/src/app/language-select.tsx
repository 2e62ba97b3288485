import { useTranslation } from 'react-i18next';
import { currentLanguage, type Language } from '../lib/i18n';

/** Language names are written in their own language, so a reader finds theirs whatever is shown. */
const choices: { value: Language; label: string }[] = [
  { value: 'en', label: 'EN' },
  { value: 'zh-CN', label: '中文' },
];

export function LanguageSelect() {
  const { t, i18n } = useTranslation();
  return (
    <select
      aria-label={t('language.label')}
      value={currentLanguage(i18n)}
      onChange={(e) => void i18n.changeLanguage(e.target.value)}
      className="h-9 rounded-md border border-slate-300 bg-white px-2 text-sm dark:border-slate-700 dark:bg-slate-900"
    >
      {choices.map((c) => (
        <option key={c.value} value={c.value}>
          {c.label}
        </option>
      ))}
    </select>
  );
}
