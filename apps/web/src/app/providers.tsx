import { type QueryClient, QueryClientProvider } from '@tanstack/react-query';
import type { i18n } from 'i18next';
import type { ReactNode } from 'react';
import { I18nextProvider } from 'react-i18next';
import { Toaster } from '../components/ui/toaster';
import { ThemeProvider } from '../lib/theme';

/** Everything a page needs around it; tests render components inside the same providers. */
export function Providers({ i18n, queryClient, children }: { i18n: i18n; queryClient: QueryClient; children: ReactNode }) {
  return (
    <I18nextProvider i18n={i18n}>
      <QueryClientProvider client={queryClient}>
        <ThemeProvider>
          {children}
          <Toaster />
        </ThemeProvider>
      </QueryClientProvider>
    </I18nextProvider>
  );
}
