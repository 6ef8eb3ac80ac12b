// One photo of the filmstrip: its preview is asked for only once the button scrolls into view.
import { useEffect, useRef, useState } from 'react';
import { previewUrl } from './previews';

export function Thumbnail({ inspectionId, photoId, filename, selected, annotations, onSelect }: { inspectionId: number; photoId: number; filename: string; selected: boolean; annotations: number; onSelect: () => void }) {
  const button = useRef<HTMLButtonElement>(null);
  const [url, setUrl] = useState<string>();
  const [failed, setFailed] = useState(false);

  useEffect(() => {
    const element = button.current;
    if (!element) return;
    // Asked a little before it scrolls into view (rootMargin), so the strip fills as it scrolls.
    const observer = new IntersectionObserver(
      (entries) => {
        if (entries.some((e) => e.isIntersecting)) {
          observer.disconnect();
          previewUrl(inspectionId, photoId, 'thumb').then(setUrl, () => setFailed(true));
        }
      },
      { rootMargin: '300px' },
    );
    observer.observe(element);
    return () => observer.disconnect();
  }, [inspectionId, photoId]);

  useEffect(() => {
    if (selected) button.current?.scrollIntoView({ block: 'nearest', inline: 'nearest' });
  }, [selected]);

  return (
    <button ref={button} type="button" className={selected ? 'thumb selected' : 'thumb'} aria-pressed={selected} onClick={onSelect} title={filename} data-photo-id={photoId}>
      {url ? <img src={url} alt="" loading="lazy" decoding="async" onError={() => (setUrl(undefined), setFailed(true))} /> : <span className="thumb-placeholder">{failed ? 'No preview' : ''}</span>}
      <span className="thumb-label">
        {filename}
        {/* The name read out is the text seen ("02.jpg 1 annotation"): no aria-label that differs from it. */}
        {annotations > 0 && (
          <span className="badge">
            {' '}
            {annotations}
            <span className="visually-hidden"> annotation{annotations > 1 ? 's' : ''}</span>
          </span>
        )}
      </span>
    </button>
  );
}
