import type { TabProps } from '../pages/workspace';

export function Viewer3dTab({ inspection }: TabProps) {
  return <p>Not built yet (inspection {inspection.id}).</p>;
}
