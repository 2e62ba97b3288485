import { useEffect, useEffectEvent } from 'react';

/** Runs `show` once for each new failure of a query (its error object changes), not on every render. */
export function useErrorToast(error: unknown, show: (error: unknown) => void): void {
  const onError = useEffectEvent(show);
  useEffect(() => {
    if (error) onError(error);
  }, [error]);
}
