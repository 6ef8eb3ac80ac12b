// Inventory items outlined on a photo (the photo viewer's overlay): each item's front face as the
// API projects it (`photo_projection`, lib/inventory-shapes.ts), a polygon in the viewer's SVG (in
// photo fractions, so it follows zoom and pan) and a label that keeps its size on screen. The item
// the address names (`item`) is drawn selected. A click on an outline selects its item.
import type { Point } from '../../lib/rect-coords';

export interface ItemOutline {
  id: number;
  /** "#3 Panel antenna 3 (L1, 121°)". */
  label: string;
  points: Point[];
  selected: boolean;
}

/** The polygons, inside the viewer's SVG (viewBox 0 0 1 1). */
export function OutlinePolygons({ outlines, onSelect, disabled }: { outlines: ItemOutline[]; onSelect: (id: number) => void; disabled: boolean }) {
  return (
    <g className="item-outlines" data-testid="item-outlines">
      {outlines.map((o) => (
        <polygon
          key={o.id}
          points={o.points.map((p) => `${p.x},${p.y}`).join(' ')}
          className={`item-outline${o.selected ? ' selected' : ''}`}
          data-item-id={o.id}
          onPointerDown={(e) => {
            if (disabled || e.button !== 0) return;
            e.stopPropagation();
            onSelect(o.id);
          }}
        >
          <title>{o.label}</title>
        </polygon>
      ))}
    </g>
  );
}

/** The labels, over the stage: at each outline's highest corner, counter-scaled by the zoom. */
export function OutlineLabels({ outlines, scale }: { outlines: ItemOutline[]; scale: number }) {
  return (
    <>
      {outlines.map((o) => {
        const top = o.points.reduce((best, p) => (p.y < best.y ? p : best), o.points[0]);
        return (
          <span key={o.id} className={`item-label${o.selected ? ' selected' : ''}`} style={{ left: `${top.x * 100}%`, top: `${top.y * 100}%`, transform: `scale(${1 / scale}) translateY(-100%)` }} aria-hidden="true">
            {o.label}
          </span>
        );
      })}
    </>
  );
}
