import type { TabProps } from '../pages/workspace';

export function PhotosTab({ inspection }: TabProps) {
  return <p>Not built yet (inspection {inspection.id}).</p>;
}
