import type { TabProps } from '../pages/workspace';

export function OutputsTab({ inspection }: TabProps) {
  return <p>Not built yet (inspection {inspection.id}).</p>;
}
