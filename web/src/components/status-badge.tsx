import { statusKind, statusName } from '../lib/statuses';

export function StatusBadge({ status }: { status: number }) {
  return <span className={`badge ${statusKind(status)}`}>{statusName(status)}</span>;
}
