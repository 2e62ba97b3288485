import type { ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { PageHeader } from '../../components/page-header';
import { Card, CardContent } from '../../components/ui/card';

/**
 * A route that exists before its screen does (docs/console.md §2.1: /api, /models and /docs show no content;
 * the admin screens and Services arrive with later work and replace this in their own feature folder).
 */
export function PlaceholderPage({ title, children }: { title: string; children?: ReactNode }) {
  const { t } = useTranslation();
  return (
    <section className="space-y-6">
      <PageHeader title={title} />
      <Card>
        <CardContent className="space-y-3 pt-5">
          <p className="text-slate-600 dark:text-slate-400">{t('placeholder.description')}</p>
          {children}
        </CardContent>
      </Card>
    </section>
  );
}
