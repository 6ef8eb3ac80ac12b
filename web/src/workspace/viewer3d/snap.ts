// Where a measurement's point goes: the surface under the pointer. The mesh when it is shown and
// the pointer's ray meets it (the exact point of the triangle), else the cloud's point nearest the
// camera among those within SNAP_PIXELS of the pointer on screen (a real point of the cloud, never
// a point in the air between them). Three's raycasting, without an acceleration structure: the
// mesh is the web copy (at most 200k faces) and the cloud searched is thinned to PICK_MAX_POINTS,
// so that one search stays within a frame or two on a laptop and can follow the pointer.
import * as THREE from 'three';

/** How far from the pointer (CSS pixels) a cloud point still counts as under it. */
export const SNAP_PIXELS = 6;
/** The most cloud points one search looks at (every k-th point of a larger cloud). */
export const PICK_MAX_POINTS = 500_000;

export interface Snap {
  /** Scene (local) coordinates of the point. */
  local: THREE.Vector3;
  kind: 'mesh' | 'cloud';
}

export function snapToSurface(options: {
  camera: THREE.PerspectiveCamera;
  /** CSS pixels from the canvas' top left corner. */
  pointer: THREE.Vector2;
  viewport: { width: number; height: number };
  mesh?: THREE.Mesh;
  points?: THREE.Points;
}): Snap | null {
  const { camera, pointer, viewport, mesh, points } = options;
  if (!viewport.width || !viewport.height) return null;
  const ndc = new THREE.Vector2((pointer.x / viewport.width) * 2 - 1, -(pointer.y / viewport.height) * 2 + 1);
  const raycaster = new THREE.Raycaster();
  raycaster.setFromCamera(ndc, camera);
  if (mesh) {
    const hit = raycaster.intersectObject(mesh, false)[0];
    if (hit) return { local: hit.point.clone(), kind: 'mesh' };
  }
  if (!points) return null;
  // The size of a pixel one unit in front of the camera; at distance d it is d times that.
  const pixelAtUnit = (2 * Math.tan(THREE.MathUtils.degToRad(camera.fov) / 2)) / viewport.height;
  const geometry = points.geometry;
  if (!geometry.boundingSphere) geometry.computeBoundingSphere();
  points.updateMatrixWorld();
  const sphere = geometry.boundingSphere!.clone().applyMatrix4(points.matrixWorld);
  // Wide enough for the farthest point of the cloud; nearer ones are held to SNAP_PIXELS below.
  raycaster.params.Points = { threshold: SNAP_PIXELS * pixelAtUnit * (camera.position.distanceTo(sphere.center) + sphere.radius) };
  const position = geometry.getAttribute('position');
  // Sorted nearest the camera first.
  for (const hit of raycaster.intersectObject(points, false)) {
    if (hit.index === undefined || hit.distanceToRay === undefined) continue;
    if (hit.distanceToRay > SNAP_PIXELS * pixelAtUnit * hit.distance) continue;
    const local = new THREE.Vector3(position.getX(hit.index), position.getY(hit.index), position.getZ(hit.index)).applyMatrix4(points.matrixWorld);
    return { local, kind: 'cloud' };
  }
  return null;
}
