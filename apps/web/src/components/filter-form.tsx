import { Eraser, Search } from 'lucide-react';
import { type FormEvent, type ReactNode, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { cn } from '../lib/cn';
import { Button } from './ui/button';
import { Label } from './ui/label';

/** The namespaces of the paged lists; each has `filters.label`, `filters.search` and `filters.clear`. */
export type FilterNamespace = 'logs' | 'audit';

interface FilterDraftOptions<F, E extends string> {
  /** The filters in effect; the draft starts from them and follows when they change elsewhere (back button). */
  applied: F;
  /** The filters with nothing set, for Clear. */
  empty: F;
  /** Two filters that give the same search are the same (the address's query string). */
  same(a: F, b: F): boolean;
  /** The draft's problem, if any: Search refuses it and the form shows it. */
  check(draft: F): E | undefined;
  onSearch(filters: F): void;
}

/**
 * A filter form's state: nothing applies until Search (or Enter); Clear empties the form and searches at once.
 * A change elsewhere (the back button, a link) replaces the draft, unless the draft already says the same.
 */
export function useFilterDraft<F, E extends string>({ applied, empty, same, check, onSearch }: FilterDraftOptions<F, E>) {
  const [draft, setDraft] = useState<F>(applied);
  const [error, setError] = useState<E>();
  const [followed, setFollowed] = useState<F>(applied);
  if (!same(followed, applied)) {
    // Adjusted while rendering, not in an effect: the form never shows the old filters for a frame.
    setFollowed(applied);
    if (!same(draft, applied)) {
      setDraft(applied);
      setError(undefined);
    }
  }
  return {
    draft,
    error,
    set<K extends keyof F>(key: K, value: F[K]) {
      setDraft((d) => ({ ...d, [key]: value }));
      setError(undefined);
    },
    submit(event: FormEvent) {
      event.preventDefault();
      const problem = check(draft);
      setError(problem);
      if (!problem) onSearch(draft);
    },
    clear() {
      setDraft(empty);
      setError(undefined);
      onSearch(empty);
    },
  };
}

interface FilterFormProps {
  ns: FilterNamespace;
  /** Tailwind grid columns at `lg` and up, one per field. */
  columns: 'lg:grid-cols-4' | 'lg:grid-cols-5';
  onSubmit(event: FormEvent): void;
  onClear(): void;
  children: ReactNode;
}

/** The fields in a grid, with Clear and Search under them, in a labelled search landmark. */
export function FilterForm({ ns, columns, onSubmit, onClear, children }: FilterFormProps) {
  const { t } = useTranslation(ns);
  return (
    <search aria-label={t('filters.label')}>
      <form onSubmit={onSubmit} noValidate className="space-y-4">
        <div className={cn('grid gap-4 sm:grid-cols-2', columns)}>{children}</div>
        <div className="flex flex-wrap justify-end gap-2">
          <Button variant="outline" onClick={onClear}>
            <Eraser aria-hidden="true" />
            {t('filters.clear')}
          </Button>
          <Button type="submit">
            <Search aria-hidden="true" />
            {t('filters.search')}
          </Button>
        </div>
      </form>
    </search>
  );
}

/** What a field's control carries when the field has an error: it is invalid and described by the message. */
export const invalidProps = (id: string, error: unknown) =>
  error ? { 'aria-invalid': true as const, 'aria-describedby': `${id}-error` } : {};

/** A label, its control (whose id is `id`) and, when there is one, the field's error as an alert. */
export function FilterField({ id, label, error, children }: { id: string; label: string; error?: string; children: ReactNode }) {
  return (
    <div className="space-y-1.5">
      <Label htmlFor={id}>{label}</Label>
      {children}
      {error && (
        <p id={`${id}-error`} role="alert" className="text-xs font-medium text-red-600 dark:text-red-400">
          {error}
        </p>
      )}
    </div>
  );
}
