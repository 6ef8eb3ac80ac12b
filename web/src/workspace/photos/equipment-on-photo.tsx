// The inventory items outlined on the photo shown (the Photos tab's side panel, under its
// annotations): each a button that selects it (its outline drawn selected, the address's `item`),
// the selected one with its geometry, how it was found, and a link to its box in the 3D view.
// Review actions (delete, review done) live in the inventory list of the Annotations tab.
import { routeHref } from '../../app/routes';
import { boxEdges } from '../../lib/inventory-shapes';
import { geometryText, howComputed, kindName, type InventoryItem } from '../inventory-list';

export function EquipmentOnPhoto({ inspectionId, items, selectedId, onSelect }: { inspectionId: number; items: InventoryItem[]; selectedId: number | undefined; onSelect: (id: number) => void }) {
  if (items.length === 0) return null;
  return (
    <section aria-labelledby="equipment-on-photo">
      <h3 id="equipment-on-photo">Equipment on this photo ({items.length})</h3>
      <ul className="annotation-list">
        {items.map((item) => (
          <li key={item.id} className={item.id === selectedId ? 'selected' : undefined}>
            <button type="button" className="link" aria-pressed={item.id === selectedId} onClick={() => onSelect(item.id)}>
              #{item.number} {item.name || kindName(item.model_type)}
            </button>
            {item.id === selectedId && (
              <div className="annotation-detail">
                <p>{geometryText(item)}</p>
                {howComputed(item) && <p className="hint">{howComputed(item)}</p>}
                {boxEdges(item) && <a href={routeHref({ name: 'workspace', id: inspectionId, tab: '3d', item: item.id })}>Show its box in 3D</a>}
              </div>
            )}
          </li>
        ))}
      </ul>
    </section>
  );
}
