import { act, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { setOsDark } from '../test/media';
import { renderWithProviders } from '../test/render';
import { ThemeToggle } from './theme-toggle';

const html = document.documentElement;

describe('theme control', () => {
  it('cycles light → dark → system, storing the choice and removing it for system', async () => {
    const user = userEvent.setup();
    await renderWithProviders(<ThemeToggle />);
    const button = () => screen.getByRole('button');

    expect(button()).toHaveAccessibleName('Theme: System');
    expect(localStorage.getItem('theme')).toBeNull();

    await user.click(button());
    expect(button()).toHaveAccessibleName('Theme: Light');
    expect(localStorage.getItem('theme')).toBe('light');
    expect(html).not.toHaveClass('dark');

    await user.click(button());
    expect(button()).toHaveAccessibleName('Theme: Dark');
    expect(localStorage.getItem('theme')).toBe('dark');
    expect(html).toHaveClass('dark');
    expect(html.style.colorScheme).toBe('dark');

    await user.click(button());
    expect(button()).toHaveAccessibleName('Theme: System');
    expect(localStorage.getItem('theme')).toBeNull();
    expect(html).not.toHaveClass('dark');
  });

  it('follows the OS setting, also when it changes, only while on system', async () => {
    const user = userEvent.setup();
    setOsDark(true);
    await renderWithProviders(<ThemeToggle />);
    expect(html).toHaveClass('dark');

    act(() => setOsDark(false));
    expect(html).not.toHaveClass('dark');

    await user.click(screen.getByRole('button')); // light: the OS no longer decides
    act(() => setOsDark(true));
    expect(html).not.toHaveClass('dark');
  });

  it('starts from the stored choice', async () => {
    localStorage.setItem('theme', 'dark');
    await renderWithProviders(<ThemeToggle />);
    expect(screen.getByRole('button')).toHaveAccessibleName('Theme: Dark');
    expect(html).toHaveClass('dark');
  });
});
