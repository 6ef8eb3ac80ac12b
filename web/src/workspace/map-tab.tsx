import type { TabProps } from '../pages/workspace';

export function MapTab({ inspection }: TabProps) {
  return <p>Not built yet (inspection {inspection.id}).</p>;
}
