import { screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { renderWithProviders } from '../test/render';
import { LanguageSelect } from './language-select';
import { ThemeToggle } from './theme-toggle';

const both = (
  <>
    <LanguageSelect />
    <ThemeToggle />
  </>
);

function browserLanguages(languages: string[]) {
  vi.spyOn(navigator, 'languages', 'get').mockReturnValue(languages);
  vi.spyOn(navigator, 'language', 'get').mockReturnValue(languages[0] ?? '');
}

describe('language selector', () => {
  afterEach(() => vi.restoreAllMocks());

  it('switches to Chinese, stores i18nextLng and marks the page language', async () => {
    browserLanguages(['en-US']);
    const user = userEvent.setup();
    await renderWithProviders(both);
    expect(screen.getByRole('combobox', { name: 'Language' })).toHaveValue('en');

    await user.selectOptions(screen.getByRole('combobox'), '中文');

    expect(localStorage.getItem('i18nextLng')).toBe('zh-CN');
    expect(screen.getByRole('combobox', { name: '语言' })).toHaveValue('zh-CN');
    expect(screen.getByRole('button', { name: '主题：跟随系统' })).toBeInTheDocument();
    expect(document.documentElement.lang).toBe('zh-CN');

    await user.selectOptions(screen.getByRole('combobox'), 'EN');
    expect(localStorage.getItem('i18nextLng')).toBe('en');
    expect(screen.getByRole('button', { name: 'Theme: System' })).toBeInTheDocument();
  });

  it('prefers the stored language over the browser language', async () => {
    browserLanguages(['en-US']);
    localStorage.setItem('i18nextLng', 'zh-CN');
    const { i18n } = await renderWithProviders(both);
    expect(i18n.resolvedLanguage).toBe('zh-CN');
    expect(screen.getByRole('combobox', { name: '语言' })).toHaveValue('zh-CN');
  });

  it.each([
    [['zh-TW', 'en'], 'zh-CN'],
    [['zh'], 'zh-CN'],
    [['en-GB'], 'en'],
    [['fr-FR', 'de'], 'en'],
  ])('maps browser languages %j to %s', async (languages, expected) => {
    browserLanguages(languages);
    const { i18n } = await renderWithProviders(both);
    expect(i18n.resolvedLanguage).toBe(expected);
    expect(screen.getByRole('combobox')).toHaveValue(expected);
  });
});
