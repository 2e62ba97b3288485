import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { Button } from '../components/ui/button';
import { useDocumentTitle } from '../lib/use-document-title';

export function NotFoundPage() {
  const { t } = useTranslation();
  useDocumentTitle(t('notFound.title'));
  return (
    <section className="space-y-4">
      <h1 className="text-2xl font-semibold">{t('notFound.title')}</h1>
      <p className="text-slate-600 dark:text-slate-400">{t('notFound.description')}</p>
      <Button asChild>
        <Link to="/">{t('notFound.home')}</Link>
      </Button>
    </section>
  );
}
