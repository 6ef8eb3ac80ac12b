// The trail above an inspection's pages: Assets › <asset name> › [<inspection name> ›]. The asset's
// name is loaded here (the inspection record only carries its id); until it arrives, or when the
// asset cannot be read, the trail says "Asset <id>".
import { api, unwrap, type Inspection } from '../api/client';
import { useLoad } from '../app/use-load';

export function InspectionCrumbs({ inspection, linkInspection = false }: { inspection: Inspection; linkInspection?: boolean }) {
  const asset = useLoad(() => unwrap(api.GET('/v1/assets/{id}/', { params: { path: { id: inspection.asset } } })), [inspection.asset]);
  return (
    <nav className="breadcrumbs" aria-label="Breadcrumb">
      <a href="#/assets">Assets</a> › <a href={`#/assets/${inspection.asset}`}>{asset.data?.name ?? `Asset ${inspection.asset}`}</a> ›
      {linkInspection && (
        <>
          {' '}
          <a href={`#/inspections/${inspection.id}`}>{inspection.name || `Inspection ${inspection.id}`}</a> ›
        </>
      )}
    </nav>
  );
}
