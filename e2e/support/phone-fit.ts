import { expect, type Locator, type Page } from '@playwright/test';

/** Checks that a screen and its dialogs fit a phone: nothing past the right edge, nothing scrolling sideways. */

/** Neither the document nor anything in it scrolls sideways. */
export async function expectNoSidewaysScroll(page: Page, where: string): Promise<void> {
  const { scrollWidth, innerWidth } = await page.evaluate(() => ({
    scrollWidth: document.scrollingElement?.scrollWidth ?? Number.POSITIVE_INFINITY,
    innerWidth: window.innerWidth,
  }));
  expect(scrollWidth, `${where}: the page is ${scrollWidth} px wide on a ${innerWidth} px screen`).toBeLessThanOrEqual(innerWidth);
}

/** `control` is shown and lies wholly between the left and right edge of the screen. */
export async function expectOnScreen(control: Locator, width: number, what: string): Promise<void> {
  await expect(control, what).toBeVisible();
  const box = await control.boundingBox();
  expect(box, what).not.toBeNull();
  expect(box?.x ?? -1, `${what} starts left of the screen`).toBeGreaterThanOrEqual(0);
  expect((box?.x ?? 0) + (box?.width ?? 0), `${what} ends right of the screen (${JSON.stringify(box)})`).toBeLessThanOrEqual(width);
}

/**
 * Every control inside `container` that is rendered (buttons, links, switches, tabs, form fields) lies wholly
 * between the left and right edge of a `width` wide screen. One pass in the page, so a dialog with a hundred
 * controls costs one round trip.
 */
export async function expectControlsOnScreen(container: Locator, width: number, what: string): Promise<void> {
  const offScreen = await container.evaluate((root, screen) => {
    const found: string[] = [];
    const selector = 'button, a[href], input:not([type="hidden"]), select, textarea, [role="switch"], [role="tab"], [role="button"]';
    for (const el of root.querySelectorAll(selector)) {
      const r = el.getBoundingClientRect();
      // Not rendered (display: none, or a visually hidden input of a custom control).
      if (r.width <= 1 || r.height <= 1) continue;
      if (r.left < 0 || r.right > screen) {
        const name = el.getAttribute('aria-label') ?? el.textContent?.trim().slice(0, 60) ?? el.tagName;
        found.push(`${el.tagName.toLowerCase()} "${name}" spans ${Math.round(r.left)}..${Math.round(r.right)} px`);
      }
    }
    return found;
  }, width);
  expect(offScreen, `${what}: controls past the edge of a ${width} px screen`).toEqual([]);
}

/**
 * The open `dialog` lies within the screen, does not scroll sideways itself, leaves the page as wide as the
 * screen, and every control in it is wholly on screen (its close and Copy buttons among them).
 */
export async function expectDialogFits(page: Page, dialog: Locator, width: number, what: string): Promise<void> {
  await expect(dialog, what).toBeVisible();
  const box = await dialog.boundingBox();
  expect(box && box.x >= 0 && box.x + box.width <= width, `${what}: dialog box ${JSON.stringify(box)} on a ${width} px screen`).toBe(true);
  expect(await dialog.evaluate((el) => el.scrollWidth - el.clientWidth), `${what} scrolls sideways`).toBeLessThanOrEqual(0);
  await expectControlsOnScreen(dialog, width, what);
  await expectNoSidewaysScroll(page, what);
}

/** A row of a table that stacks below 42rem is a flex column (a card of label and value lines), not a table row. */
export const isCard = (row: Locator) =>
  row.evaluate((el) => getComputedStyle(el).display === 'flex' && getComputedStyle(el).flexDirection === 'column');
