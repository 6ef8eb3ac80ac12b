// The Upload page's state: the files the user added, their upload to S3 (4 at a time, through
// s3-uploader.ts, loaded on demand with the AWS SDK), progress, and the registration of the
// uploaded keys (500 per call). Failed files stay listed until they are retried successfully.
import { useCallback, useEffect, useRef, useState } from 'react';
import { api, consoleSettings, unwrap } from '../api/client';
import { ApiProblem } from '../lib/api-problem';
import { batches, objectKeys, ProgressTracker, selectImages, type ProgressSnapshot } from '../lib/upload-plan';
import type { PickedFile } from './file-drop';
import type { S3Uploader, StorageCredentials } from './s3-uploader';

export type ItemStatus = 'waiting' | 'uploading' | 'uploaded' | 'registered' | 'failed';

export interface UploadItem {
  id: string;
  name: string;
  key: string;
  size: number;
  status: ItemStatus;
  /** 0..1 */
  fraction: number;
  error?: string;
  /** The last retry under way, e.g. "attempt 2 failed: NetworkError". */
  note?: string;
}

export interface UploadSession {
  items: UploadItem[];
  skipped: { name: string; reason: string }[];
  progress: ProgressSnapshot;
  /** Photos registered on the inspection (nb_images_registered of the last call). */
  registered: number;
  registering: boolean;
  /** Preparing: loading the uploader and the credentials. */
  preparing: boolean;
  /** An error outside one file (credentials, registration). */
  error: string | undefined;
  busy: boolean;
  addFiles(files: PickedFile[]): void;
  retryFailed(): void;
}

const FILE_CONCURRENCY = 4;
const RENDER_EVERY_MS = 200;

export function useUploadSession(inspectionId: number): UploadSession {
  const items = useRef<UploadItem[]>([]);
  const files = useRef(new Map<string, File>());
  const tracker = useRef(new ProgressTracker());
  const uploader = useRef<Promise<S3Uploader> | undefined>(undefined);
  const running = useRef(0);
  const nextId = useRef(0);
  const [skipped, setSkipped] = useState<{ name: string; reason: string }[]>([]);
  const [registered, setRegistered] = useState(0);
  const [registering, setRegistering] = useState(false);
  const [preparing, setPreparing] = useState(0);
  const [error, setError] = useState<string | undefined>();
  const [, setTick] = useState(0);
  const renderTimer = useRef<number | undefined>(undefined);
  const alive = useRef(true);
  const abort = useRef(new AbortController());

  // Progress events come many times a second per request: render at most every 200 ms.
  const render = useCallback((now = false) => {
    if (!alive.current) return;
    if (now) {
      window.clearTimeout(renderTimer.current);
      renderTimer.current = undefined;
      setTick((t) => t + 1);
    } else if (renderTimer.current === undefined) {
      renderTimer.current = window.setTimeout(() => {
        renderTimer.current = undefined;
        if (alive.current) setTick((t) => t + 1);
      }, RENDER_EVERY_MS);
    }
  }, []);

  useEffect(() => {
    alive.current = true;
    return () => {
      alive.current = false;
      abort.current.abort();
      window.clearTimeout(renderTimer.current);
      void uploader.current?.then((u) => u.destroy());
    };
  }, []);

  const getUploader = useCallback(() => {
    uploader.current ??= import('./s3-uploader').then(
      ({ S3Uploader }) =>
        new S3Uploader({
          fetchCredentials: () => unwrap(api.GET('/v1/inspections/{id}/s3_credentials/', { params: { path: { id: inspectionId } } })) as Promise<StorageCredentials>,
          fallbackEndpoint: consoleSettings().storage_url,
        }),
    );
    // A failure (e.g. credentials refused) is not remembered: the next attempt tries again.
    uploader.current.catch(() => (uploader.current = undefined));
    return uploader.current;
  }, [inspectionId]);

  const register = useCallback(async () => {
    const ready = items.current.filter((i) => i.status === 'uploaded');
    if (ready.length === 0) return;
    setRegistering(true);
    try {
      for (const batch of batches(ready)) {
        const result = await unwrap(
          api.POST('/v1/inspections/{id}/register_images/', { params: { path: { id: inspectionId } }, body: { image_keys: batch.map((i) => i.key) } }),
        );
        for (const item of batch) item.status = 'registered';
        // The answer is the inspection's count of registered photos (earlier calls included).
        if (alive.current) setRegistered(result.nb_images_registered);
        render(true);
      }
    } catch (err) {
      if (alive.current) setError(`The photos were uploaded but could not be registered: ${err instanceof ApiProblem ? err.message : String(err)}`);
    } finally {
      if (alive.current) setRegistering(false);
      render(true);
    }
  }, [inspectionId, render]);

  const pump = useCallback(() => {
    while (running.current < FILE_CONCURRENCY) {
      const item = items.current.find((i) => i.status === 'waiting');
      if (!item) break;
      running.current++;
      item.status = 'uploading';
      item.error = undefined;
      void (async () => {
        const file = files.current.get(item.id)!;
        try {
          const s3 = await getUploader();
          const { contentTypeOf, errorMessage } = await import('./s3-uploader');
          await s3
            .upload({
              file,
              key: item.key,
              contentType: contentTypeOf(file),
              signal: abort.current.signal,
              onProgress: (bytes) => {
                tracker.current.update(item.id, bytes, performance.now());
                item.fraction = tracker.current.fileFraction(item.id);
                render();
              },
              onRetry: (attempt, reason) => {
                item.note = `Attempt ${attempt} failed (${reason}); retrying…`;
                render();
              },
            })
            .catch((err: unknown) => {
              throw new Error(errorMessage(err));
            });
          item.status = 'uploaded';
          item.note = undefined;
          tracker.current.update(item.id, item.size, performance.now());
          item.fraction = 1;
        } catch (err) {
          item.status = 'failed';
          item.note = undefined;
          item.error = err instanceof Error ? err.message : String(err);
        } finally {
          running.current--;
          render(true);
          if (alive.current) {
            pump();
            if (running.current === 0 && !items.current.some((i) => i.status === 'waiting')) void register();
          }
        }
      })();
    }
  }, [getUploader, register, render]);

  const addFiles = useCallback(
    (picked: PickedFile[]) => {
      const candidates = picked.map((p) => ({ name: p.file.name, size: p.file.size, type: p.file.type, relativePath: p.relativePath, file: p.file }));
      const { accepted, skipped: refused } = selectImages(candidates);
      if (refused.length) setSkipped((s) => [...s, ...refused.map((r) => ({ name: r.file.relativePath ?? r.file.name, reason: r.reason }))]);
      if (accepted.length === 0) return;
      // A folder comes in the file system's order: list (and upload) by path, numbers in order.
      accepted.sort((a, b) => (a.relativePath ?? a.name).localeCompare(b.relativePath ?? b.name, undefined, { numeric: true }));
      setError(undefined);
      setPreparing((n) => n + 1);
      void (async () => {
        try {
          const { prefix } = await (await getUploader()).target();
          const keys = objectKeys(prefix, accepted, items.current.map((i) => i.key));
          accepted.forEach((candidate, index) => {
            const id = `f${++nextId.current}`;
            files.current.set(id, candidate.file);
            tracker.current.addFile(id, candidate.size);
            items.current.push({ id, name: candidate.relativePath ?? candidate.name, key: keys[index], size: candidate.size, status: 'waiting', fraction: 0 });
          });
          pump();
        } catch (err) {
          if (alive.current) {
            setError(`Cannot upload: ${err instanceof ApiProblem ? err.message : 'the storage credentials could not be loaded'}`);
            // Nothing lost: the photos are listed as failed, "Retry failed" tries them again.
            for (const candidate of accepted) {
              const id = `f${++nextId.current}`;
              files.current.set(id, candidate.file);
              tracker.current.addFile(id, candidate.size);
              items.current.push({ id, name: candidate.relativePath ?? candidate.name, key: '', size: candidate.size, status: 'failed', fraction: 0, error: 'not started' });
            }
          }
        } finally {
          if (alive.current) setPreparing((n) => n - 1);
          render(true);
        }
      })();
    },
    [getUploader, pump, render],
  );

  const retryFailed = useCallback(() => {
    setError(undefined);
    void (async () => {
      const failed = items.current.filter((i) => i.status === 'failed');
      const unkeyed = failed.filter((i) => !i.key);
      if (unkeyed.length) {
        try {
          const { prefix } = await (await getUploader()).target();
          const keys = objectKeys(prefix, unkeyed.map((i) => ({ name: i.name, relativePath: i.name })), items.current.map((i) => i.key).filter(Boolean));
          unkeyed.forEach((item, n) => (item.key = keys[n]));
        } catch (err) {
          setError(`Cannot upload: ${err instanceof ApiProblem ? err.message : 'the storage credentials could not be loaded'}`);
          return;
        }
      }
      for (const item of failed) {
        item.status = 'waiting';
        item.error = undefined;
        tracker.current.update(item.id, 0, performance.now());
        item.fraction = 0;
      }
      render(true);
      if (failed.length) pump();
      else void register(); // only the registration had failed
    })();
  }, [getUploader, pump, register, render]);

  const list = items.current;
  const busy = preparing > 0 || registering || list.some((i) => i.status === 'waiting' || i.status === 'uploading');
  return {
    items: [...list],
    skipped,
    progress: tracker.current.snapshot(performance.now()),
    registered,
    registering,
    preparing: preparing > 0,
    error,
    busy,
    addFiles,
    retryFailed,
  };
}
