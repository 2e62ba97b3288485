import { createContext, type ReactNode, useCallback, useContext, useEffect, useMemo, useState } from 'react';

/** What the user chose. `system` stores nothing and follows the OS setting, also when it changes later. */
export type ThemeChoice = 'light' | 'dark' | 'system';

export const THEME_STORAGE_KEY = 'theme';

const cycle: ThemeChoice[] = ['light', 'dark', 'system'];

export function nextTheme(current: ThemeChoice): ThemeChoice {
  return cycle[(cycle.indexOf(current) + 1) % cycle.length] ?? 'light';
}

export function readThemeChoice(): ThemeChoice {
  const stored = localStorage.getItem(THEME_STORAGE_KEY);
  return stored === 'light' || stored === 'dark' ? stored : 'system';
}

function storeThemeChoice(choice: ThemeChoice): void {
  if (choice === 'system') localStorage.removeItem(THEME_STORAGE_KEY);
  else localStorage.setItem(THEME_STORAGE_KEY, choice);
}

const darkQuery = () => window.matchMedia('(prefers-color-scheme: dark)');

/** The same rule as the inline script in index.html, which applies it before React loads. */
export function applyTheme(choice: ThemeChoice): void {
  const dark = choice === 'dark' || (choice === 'system' && darkQuery().matches);
  document.documentElement.classList.toggle('dark', dark);
  document.documentElement.style.colorScheme = dark ? 'dark' : 'light';
}

interface ThemeState {
  choice: ThemeChoice;
  setChoice(choice: ThemeChoice): void;
}

const ThemeContext = createContext<ThemeState | null>(null);

export function ThemeProvider({ children }: { children: ReactNode }) {
  const [choice, setChoiceState] = useState<ThemeChoice>(readThemeChoice);

  const setChoice = useCallback((next: ThemeChoice) => {
    storeThemeChoice(next);
    setChoiceState(next);
  }, []);

  useEffect(() => {
    applyTheme(choice);
    if (choice !== 'system') return;
    const query = darkQuery();
    const follow = () => applyTheme('system');
    query.addEventListener('change', follow);
    return () => query.removeEventListener('change', follow);
  }, [choice]);

  const value = useMemo(() => ({ choice, setChoice }), [choice, setChoice]);
  return <ThemeContext.Provider value={value}>{children}</ThemeContext.Provider>;
}

export function useTheme(): ThemeState {
  const state = useContext(ThemeContext);
  if (!state) throw new Error('useTheme must be used inside <ThemeProvider>');
  return state;
}
