// `?coords_3d=true` on annotation creation: the position of the annotation in the point cloud.
//
// Computing it needs what the inspection does not have yet: a reconstructed point cloud (or a
// depth map) to intersect the photo ray with. The only engine so far (`exif`) reconstructs
// nothing, so `locate` answers null and the annotation stores `coords_3d: null`. This is the seam
// where the computation goes once an engine produces point clouds: project the centre of the
// annotation's rectangle through the calibrated camera and take the nearest point-cloud hit,
// in the inspection's output coordinate system (extras.coordinate_system), metres.
import type { CameraRow, InspectionRow, Point3 } from '../inspection.tables.ts';

export interface Coords3dLocator {
  locate(inspection: InspectionRow, camera: CameraRow, coords2d: [number, number][]): Promise<Point3 | null>;
}

export const noPointCloudLocator: Coords3dLocator = {
  async locate() {
    return null;
  },
};
