/** jsdom has no matchMedia; this one answers `prefers-color-scheme: dark` from a switch tests control. */
let osDark = false;
type Listener = (event: { matches: boolean; media: string }) => void;
const listeners = new Set<{ query: string; listener: Listener }>();

const matches = (query: string) => query.includes('prefers-color-scheme: dark') && osDark;

export function installMatchMedia(): void {
  osDark = false;
  listeners.clear();
  window.matchMedia = (query: string) =>
    ({
      media: query,
      get matches() {
        return matches(query);
      },
      addEventListener: (_type: string, listener: Listener) => listeners.add({ query, listener }),
      removeEventListener: (_type: string, listener: Listener) => {
        for (const entry of listeners) if (entry.listener === listener) listeners.delete(entry);
      },
      // Older API, still used by some libraries (sonner).
      addListener: (listener: Listener) => listeners.add({ query, listener }),
      removeListener: (listener: Listener) => {
        for (const entry of listeners) if (entry.listener === listener) listeners.delete(entry);
      },
    }) as unknown as MediaQueryList;
}

/** Flips the OS colour scheme and tells every listener, as the browser does. */
export function setOsDark(dark: boolean): void {
  osDark = dark;
  for (const { query, listener } of listeners) listener({ matches: matches(query), media: query });
}
