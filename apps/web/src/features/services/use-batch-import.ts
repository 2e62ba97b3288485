import { useQueryClient } from '@tanstack/react-query';
import { type BatchImportRequest, routes } from '@toolport/contract';
import { useCallback, useEffect, useRef, useState } from 'react';
import { ApiError, call } from '../../lib/api';
import { refreshServices } from '../../lib/installed-services';
import { getToken } from '../../lib/session';
import { type BatchItem, type BatchSummary, parseBatchEvent, parseImportJson, progressUrl, summarize } from './batch-import';

export type BatchPhase = 'input' | 'progress' | 'report';

/** The alert shown over the input: keys of the services namespace. */
export type BatchAlert = 'batch.invalidJson' | 'batch.connectionError' | 'batch.startFailed';

/**
 * Batch import (docs/console.md §4): input → progress → report. Invalid JSON stays on the input with an
 * alert; a failure to start or an error of the event stream returns to the input with its alert.
 */
export function useBatchImport() {
  const queryClient = useQueryClient();
  const [phase, setPhase] = useState<BatchPhase>('input');
  const [items, setItems] = useState<BatchItem[]>([]);
  const [summary, setSummary] = useState<BatchSummary>({ success: 0, skipped: 0, failed: 0 });
  const [alert, setAlert] = useState<{ key: BatchAlert; detail?: string } | null>(null);
  const source = useRef<EventSource | null>(null);

  const closeStream = useCallback(() => {
    source.current?.close();
    source.current = null;
  }, []);

  useEffect(() => closeStream, [closeStream]);

  const follow = useCallback(
    (taskId: string) => {
      const received: BatchItem[] = [];
      const stream = new EventSource(progressUrl(taskId, getToken() ?? ''));
      source.current = stream;
      stream.onmessage = (message: MessageEvent<string>) => {
        const event = parseBatchEvent(message.data);
        if (event.kind === 'item') {
          received.push(event.item);
          setItems([...received]);
        } else if (event.kind === 'done') {
          closeStream();
          setSummary(summarize(received, event.summary));
          setPhase('report');
          void refreshServices(queryClient);
        }
      };
      stream.onerror = () => {
        // The browser would reconnect on its own; a broken import stream is reported instead.
        if (source.current !== stream) return;
        closeStream();
        setAlert({ key: 'batch.connectionError' });
        setPhase('input');
        void refreshServices(queryClient);
      };
    },
    [closeStream, queryClient],
  );

  const start = useCallback(
    async (text: string) => {
      if (parseImportJson(text) === undefined) {
        setAlert({ key: 'batch.invalidJson' });
        return;
      }
      setAlert(null);
      setItems([]);
      setPhase('progress');
      try {
        // The text goes as it was typed, not re-serialised: the server says what is wrong with a document it
        // cannot import, including a server name given twice, which parsing here would silently drop.
        const data = await call(routes.market.batchImport, { body: text satisfies BatchImportRequest, notify: false });
        if (!data?.task_id) throw new Error('no task id');
        follow(data.task_id);
      } catch (err) {
        setAlert({ key: 'batch.startFailed', detail: err instanceof ApiError ? err.serverMessage : undefined });
        setPhase('input');
      }
    },
    [follow],
  );

  const reset = useCallback(() => {
    closeStream();
    setPhase('input');
    setItems([]);
    setAlert(null);
  }, [closeStream]);

  return { phase, items, summary, alert, running: phase === 'progress', start, reset };
}
