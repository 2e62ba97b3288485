import { ChevronLeft, ChevronRight } from 'lucide-react';
import { useTranslation } from 'react-i18next';
import { pageWindow, type ShownRange } from '../lib/pagination';
import { Button } from './ui/button';

interface PagerProps {
  page: number;
  pages: number;
  range: ShownRange;
  onPage(page: number): void;
}

/**
 * 'Showing start to end of total' with previous, up to five page buttons and next (docs/console.md §2.15, §9), under
 * the paged lists (Logs, Audit). On a narrow screen the text sits above the buttons and the arrows lose their words.
 */
export function Pager({ page, pages, range, onPage }: PagerProps) {
  const { t, i18n } = useTranslation('common');
  const number = new Intl.NumberFormat(i18n.language);
  const go = (target: number) => () => onPage(target);

  return (
    <div className="flex flex-col gap-3 sm:flex-row sm:items-center sm:justify-between">
      <p className="text-sm text-slate-600 dark:text-slate-400" data-testid="logs-showing" aria-live="polite">
        {t('showing', { start: number.format(range.start), end: number.format(range.end), total: number.format(range.total) })}
      </p>
      <nav aria-label={t('pager.label')} className="flex flex-wrap items-center gap-1">
        <Button variant="outline" size="sm" disabled={page <= 1} onClick={go(page - 1)} aria-label={t('pager.previous')}>
          <ChevronLeft aria-hidden="true" />
          <span className="hidden sm:inline">{t('pager.previous')}</span>
        </Button>
        {pageWindow(page, pages).map((n) => (
          <Button
            key={n}
            variant={n === page ? 'default' : 'ghost'}
            size="sm"
            className="min-w-8 tabular-nums"
            aria-label={t('pager.page', { page: n })}
            aria-current={n === page ? 'page' : undefined}
            onClick={n === page ? undefined : go(n)}
          >
            {number.format(n)}
          </Button>
        ))}
        <Button variant="outline" size="sm" disabled={page >= pages} onClick={go(page + 1)} aria-label={t('pager.next')}>
          <span className="hidden sm:inline">{t('pager.next')}</span>
          <ChevronRight aria-hidden="true" />
        </Button>
      </nav>
    </div>
  );
}
