// A photo with its annotations as rectangles: zoom (wheel, +/−, 0 to fit), pan (drag, arrow keys
// with Shift), and a draw mode (button or D) in which dragging draws a new rectangle. Rectangles
// live in photo fractions (lib/rect-coords.ts) inside an SVG laid over the image, so they follow
// zoom and pan without any maths here.
import { useCallback, useEffect, useLayoutEffect, useRef, useState, type PointerEvent as ReactPointerEvent } from 'react';
import { clientToPhoto, coords2dToRect, isUsableRect, rectFromCorners, zoomAbout, type Point, type Rect } from '../../lib/rect-coords';

export interface DrawnAnnotation {
  id: number;
  number: number;
  type: string;
  severity: number;
  coords: unknown;
}

interface View {
  scale: number;
  x: number;
  y: number;
}

export function PhotoViewer({
  src,
  alt,
  annotations,
  selectedId,
  draft,
  drawing,
  onDrawingChange,
  onDrawn,
  onSelect,
}: {
  src: string | undefined;
  alt: string;
  annotations: DrawnAnnotation[];
  selectedId?: number;
  draft?: Rect;
  drawing: boolean;
  onDrawingChange: (drawing: boolean) => void;
  onDrawn: (rect: Rect) => void;
  onSelect: (id: number) => void;
}) {
  const frame = useRef<HTMLDivElement>(null);
  const image = useRef<HTMLImageElement>(null);
  const [natural, setNatural] = useState<{ w: number; h: number }>();
  const [view, setView] = useState<View>({ scale: 1, x: 0, y: 0 });
  const [sketch, setSketch] = useState<{ start: Point; end: Point }>();
  const drag = useRef<{ x: number; y: number; view: View } | null>(null);

  const fit = useCallback(() => {
    const box = frame.current?.getBoundingClientRect();
    if (!box || !natural) return;
    const scale = Math.min(box.width / natural.w, box.height / natural.h);
    setView({ scale, x: (box.width - natural.w * scale) / 2, y: (box.height - natural.h * scale) / 2 });
  }, [natural]);
  useLayoutEffect(fit, [fit]);

  const zoom = (factor: number, anchor?: Point) => {
    const box = frame.current?.getBoundingClientRect();
    if (!box) return;
    setView((v) => zoomAbout(v, factor, anchor ?? { x: box.width / 2, y: box.height / 2 }));
  };

  useEffect(() => {
    const element = frame.current;
    if (!element) return;
    const onWheel = (event: WheelEvent) => {
      event.preventDefault();
      const box = element.getBoundingClientRect();
      zoom(event.deltaY < 0 ? 1.2 : 1 / 1.2, { x: event.clientX - box.left, y: event.clientY - box.top });
    };
    element.addEventListener('wheel', onWheel, { passive: false });
    return () => element.removeEventListener('wheel', onWheel);
  }, []);

  const photoPoint = (event: ReactPointerEvent) => {
    const box = image.current!.getBoundingClientRect();
    return clientToPhoto({ x: event.clientX, y: event.clientY }, box);
  };

  function onPointerDown(event: ReactPointerEvent<HTMLDivElement>) {
    if (event.button !== 0 || !natural) return;
    frame.current?.setPointerCapture(event.pointerId);
    if (drawing) {
      const point = photoPoint(event);
      setSketch({ start: point, end: point });
    } else {
      drag.current = { x: event.clientX, y: event.clientY, view };
    }
  }
  function onPointerMove(event: ReactPointerEvent<HTMLDivElement>) {
    if (sketch) setSketch({ ...sketch, end: photoPoint(event) });
    else if (drag.current) {
      const d = drag.current;
      setView({ ...d.view, x: d.view.x + event.clientX - d.x, y: d.view.y + event.clientY - d.y });
    }
  }
  function onPointerUp(event: ReactPointerEvent<HTMLDivElement>) {
    drag.current = null;
    if (!sketch) return;
    const rect = rectFromCorners(sketch.start, photoPoint(event));
    setSketch(undefined);
    if (isUsableRect(rect)) {
      onDrawingChange(false);
      onDrawn(rect);
    }
  }

  function onKeyDown(event: React.KeyboardEvent) {
    const step = 40;
    if (event.key === '+' || event.key === '=') zoom(1.25);
    else if (event.key === '-') zoom(0.8);
    else if (event.key === '0') fit();
    else if (event.shiftKey && event.key.startsWith('Arrow')) {
      const dx = event.key === 'ArrowLeft' ? step : event.key === 'ArrowRight' ? -step : 0;
      const dy = event.key === 'ArrowUp' ? step : event.key === 'ArrowDown' ? -step : 0;
      setView((v) => ({ ...v, x: v.x + dx, y: v.y + dy }));
    } else return;
    event.preventDefault();
    event.stopPropagation();
  }

  const live = sketch ? rectFromCorners(sketch.start, sketch.end) : undefined;
  return (
    <div className="photo-viewer">
      <div className="viewer-tools" role="toolbar" aria-label="Photo tools">
        <button type="button" aria-pressed={drawing} onClick={() => onDrawingChange(!drawing)} title="Draw a rectangle (D)">
          {drawing ? 'Drawing: drag on the photo' : 'Draw annotation'}
        </button>
        <button type="button" onClick={() => zoom(1.25)} aria-label="Zoom in" title="Zoom in (+)">
          +
        </button>
        <button type="button" onClick={() => zoom(0.8)} aria-label="Zoom out" title="Zoom out (−)">
          −
        </button>
        <button type="button" onClick={fit} title="Fit the photo (0)">
          Fit
        </button>
        <span className="hint">Wheel or +/− zoom · drag or Shift+arrows pan · ←/→ other photos</span>
      </div>
      <div
        ref={frame}
        className={drawing ? 'viewer-frame drawing' : 'viewer-frame'}
        tabIndex={0}
        role="application"
        aria-label={`Photo ${alt}${drawing ? ', draw mode' : ''}`}
        data-testid="photo-frame"
        onPointerDown={onPointerDown}
        onPointerMove={onPointerMove}
        onPointerUp={onPointerUp}
        onKeyDown={onKeyDown}
      >
        {src && (
          <div className="viewer-stage" style={{ transform: `translate(${view.x}px, ${view.y}px) scale(${view.scale})`, width: natural?.w, height: natural?.h }}>
            <img ref={image} src={src} alt={alt} draggable={false} onLoad={(e) => setNatural({ w: e.currentTarget.naturalWidth, h: e.currentTarget.naturalHeight })} data-testid="photo-image" />
            {natural && (
              <svg className="viewer-overlay" viewBox="0 0 1 1" preserveAspectRatio="none" width={natural.w} height={natural.h}>
                {annotations.map((a) => {
                  const r = coords2dToRect(a.coords);
                  if (!r) return null;
                  return (
                    <rect
                      key={a.id}
                      x={r.x0}
                      y={r.y0}
                      width={r.x1 - r.x0}
                      height={r.y1 - r.y0}
                      className={`annotation-rect severity-${a.severity}${a.id === selectedId ? ' selected' : ''}`}
                      data-annotation-id={a.id}
                      onPointerDown={(e) => {
                        if (drawing) return;
                        e.stopPropagation();
                        onSelect(a.id);
                      }}
                    >
                      <title>{`#${a.number} ${a.type} (severity ${a.severity})`}</title>
                    </rect>
                  );
                })}
                {(live ?? draft) && <rect x={(live ?? draft)!.x0} y={(live ?? draft)!.y0} width={(live ?? draft)!.x1 - (live ?? draft)!.x0} height={(live ?? draft)!.y1 - (live ?? draft)!.y0} className="annotation-rect draft" />}
              </svg>
            )}
          </div>
        )}
      </div>
    </div>
  );
}
