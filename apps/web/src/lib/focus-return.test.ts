import { afterEach, describe, expect, it } from 'vitest';
import { focusOrigins, followFocus, returnFocus } from './focus-return';

const button = (name: string) => {
  const el = document.createElement('button');
  el.textContent = name;
  document.body.append(el);
  return el;
};

describe('focus return', () => {
  afterEach(() => document.body.replaceChildren());

  it('gives the focus to the newest origin still in the page: a menu item gone, its menu button', () => {
    followFocus();
    const menu = button('Add Service');
    const item = button('Custom Install');
    menu.focus();
    item.focus();
    const origins = focusOrigins();
    expect(origins.slice(0, 2)).toEqual([item, menu]);

    item.remove();
    (document.activeElement as HTMLElement | null)?.blur();
    expect(returnFocus(origins)).toBe(true);
    expect(document.activeElement).toBe(menu);
  });

  it('waits for a busy (disabled) opener to be enabled again, then focuses it', async () => {
    const status = button('Enable alice');
    status.focus();
    const origins = focusOrigins();
    // A browser takes the focus away from a control that becomes disabled; jsdom does not.
    status.blur();
    status.disabled = true;
    expect(returnFocus(origins)).toBe(true);
    expect(document.activeElement).toBe(document.body);

    status.disabled = false;
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(document.activeElement).toBe(status);
  });

  it('answers false when nothing it remembers can take the focus, so radix decides', () => {
    const gone = button('gone');
    gone.focus();
    const origins = focusOrigins().filter((el) => el === gone);
    gone.remove();
    expect(returnFocus(origins)).toBe(false);
  });
});
