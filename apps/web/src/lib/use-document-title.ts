import { useEffect } from 'react';

const PRODUCT = 'Toolport';

/**
 * Sets the tab's title to the page's own, in the current language (issue 15, item 7): screen readers announce
 * it on navigation and a user with many tabs finds the right one. Callers pass translated text, so a language
 * switch re-renders them and the title follows.
 */
export function useDocumentTitle(title: string | undefined): void {
  useEffect(() => {
    document.title = !title ? PRODUCT : title.includes(PRODUCT) ? title : `${title} · ${PRODUCT}`;
  }, [title]);
}
