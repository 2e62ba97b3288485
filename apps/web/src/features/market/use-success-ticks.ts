import { useCallback, useEffect, useRef, useState } from 'react';

/** How long a card shows its tick after an install or uninstall (docs/console.md §9). */
export const SUCCESS_TICK_MS = 2_000;

/** green after an install, red after an uninstall (docs/console.md §2.10). */
export type Tick = 'installed' | 'uninstalled';

/** The tick overlays of the cards: `show(id, kind)` puts one up for 2 s. */
export function useSuccessTicks() {
  const [ticks, setTicks] = useState<Record<string, Tick>>({});
  const timers = useRef(new Map<string, ReturnType<typeof setTimeout>>());

  useEffect(() => {
    const pending = timers.current;
    return () => {
      for (const timer of pending.values()) clearTimeout(timer);
      pending.clear();
    };
  }, []);

  const show = useCallback((id: string, kind: Tick) => {
    clearTimeout(timers.current.get(id));
    setTicks((all) => ({ ...all, [id]: kind }));
    timers.current.set(
      id,
      setTimeout(() => {
        timers.current.delete(id);
        setTicks(({ [id]: _done, ...rest }) => rest);
      }, SUCCESS_TICK_MS),
    );
  }, []);

  return { ticks, show };
}
