// The 3D scene of an inspection (three.js): the point cloud with its colours, the calibrated
// cameras as small pyramids oriented by their rotation, picking points on the cloud, and a
// projection of 3D positions to the screen (for the DOM markers of annotations). Everything is in
// the output coordinate system (metres, x east, y north, z up) minus `centre`, so float32 keeps
// millimetres. Loaded on demand with the 3D tab only.
import * as THREE from 'three';
import { OrbitControls } from 'three/examples/jsm/controls/OrbitControls.js';
import type { PlyCloud } from '../../lib/ply';

export type Vec3 = [number, number, number];

export interface SceneCamera {
  /** Absolute position in the output coordinate system. */
  position: Vec3;
  /** Row-major 3x3, camera frame (x right, y down, z forward) -> output axes. */
  rotation: number[][];
  aspect: number;
}

export class InspectionScene {
  readonly renderer: THREE.WebGLRenderer;
  readonly scene = new THREE.Scene();
  readonly camera: THREE.PerspectiveCamera;
  readonly controls: OrbitControls;
  private points: THREE.Points | undefined;
  private readonly overlay = new THREE.Group();
  private readonly measureGroup = new THREE.Group();
  private frame = 0;
  private radius = 10;
  centre: Vec3 = [0, 0, 0];
  onRender: (() => void) | undefined;

  constructor(readonly canvas: HTMLCanvasElement) {
    // preserveDrawingBuffer: the canvas can be read back (tests check that points were drawn).
    this.renderer = new THREE.WebGLRenderer({ canvas, antialias: true, preserveDrawingBuffer: true });
    this.renderer.setPixelRatio(Math.min(window.devicePixelRatio, 2));
    this.scene.background = new THREE.Color(0x1b2430);
    this.camera = new THREE.PerspectiveCamera(55, 1, 0.05, 5000);
    this.camera.up.set(0, 0, 1); // z is up in the output system
    this.controls = new OrbitControls(this.camera, canvas);
    this.controls.enableDamping = true;
    this.controls.listenToKeyEvents(canvas);
    this.controls.addEventListener('change', () => this.requestRender());
    this.scene.add(this.overlay, this.measureGroup);
    this.resize();
  }

  setCloud(cloud: PlyCloud): void {
    this.centre = cloud.centre;
    const geometry = new THREE.BufferGeometry();
    geometry.setAttribute('position', new THREE.BufferAttribute(cloud.positions, 3));
    if (cloud.colors) geometry.setAttribute('color', new THREE.BufferAttribute(cloud.colors, 3));
    geometry.computeBoundingSphere();
    this.radius = robustRadius(cloud.positions);
    const material = new THREE.PointsMaterial({ size: 3, sizeAttenuation: false, vertexColors: !!cloud.colors, color: cloud.colors ? 0xffffff : 0xcfd8e3 });
    this.points = new THREE.Points(geometry, material);
    this.scene.add(this.points);
    this.fit();
  }

  /** Local (scene) coordinates of an absolute position. */
  local(p: Vec3): THREE.Vector3 {
    return new THREE.Vector3(p[0] - this.centre[0], p[1] - this.centre[1], p[2] - this.centre[2]);
  }

  absolute(v: THREE.Vector3): Vec3 {
    return [v.x + this.centre[0], v.y + this.centre[1], v.z + this.centre[2]];
  }

  setCameras(cameras: SceneCamera[]): void {
    const size = this.radius * 0.04;
    const material = new THREE.LineBasicMaterial({ color: 0x53a1ff });
    for (const cam of cameras) {
      const r = cam.rotation;
      const toWorld = (x: number, y: number, z: number) => new THREE.Vector3(r[0][0] * x + r[0][1] * y + r[0][2] * z, r[1][0] * x + r[1][1] * y + r[1][2] * z, r[2][0] * x + r[2][1] * y + r[2][2] * z);
      const apex = this.local(cam.position);
      const w = size * cam.aspect;
      const corners = [toWorld(-w, -size, size * 1.5), toWorld(w, -size, size * 1.5), toWorld(w, size, size * 1.5), toWorld(-w, size, size * 1.5)].map((c) => c.add(apex));
      const segments = [apex, corners[0], apex, corners[1], apex, corners[2], apex, corners[3], corners[0], corners[1], corners[1], corners[2], corners[2], corners[3], corners[3], corners[0], corners[0], corners[2].clone().lerp(corners[1], 0.5)];
      this.overlay.add(new THREE.LineSegments(new THREE.BufferGeometry().setFromPoints(segments), material));
    }
    this.requestRender();
  }

  /** Annotation positions as small spheres (their labels are DOM buttons placed by project()). */
  setMarkers(positions: Vec3[]): void {
    const geometry = new THREE.SphereGeometry(this.radius * 0.012, 12, 8);
    const material = new THREE.MeshBasicMaterial({ color: 0xffc400 });
    for (const p of positions) {
      const mesh = new THREE.Mesh(geometry, material);
      mesh.position.copy(this.local(p));
      this.overlay.add(mesh);
    }
    this.requestRender();
  }

  /** Measurements drawn as lines through their absolute points. */
  setMeasurements(lines: Vec3[][], draft: Vec3[] = []): void {
    this.measureGroup.clear();
    const add = (points: Vec3[], color: number) => {
      if (points.length === 0) return;
      const local = points.map((p) => this.local(p));
      if (local.length > 1) this.measureGroup.add(new THREE.Line(new THREE.BufferGeometry().setFromPoints(local), new THREE.LineBasicMaterial({ color, depthTest: false })));
      const dots = new THREE.Points(new THREE.BufferGeometry().setFromPoints(local), new THREE.PointsMaterial({ color, size: 8, sizeAttenuation: false, depthTest: false }));
      this.measureGroup.add(dots);
    };
    for (const line of lines) add(line, 0x3ad1ff);
    add(draft, 0xff4d3d);
    this.requestRender();
  }

  /** The cloud point under a pointer (client coordinates), absolute; null when none is near. */
  pick(clientX: number, clientY: number): Vec3 | null {
    if (!this.points) return null;
    const box = this.canvas.getBoundingClientRect();
    const ndc = new THREE.Vector2(((clientX - box.left) / box.width) * 2 - 1, -((clientY - box.top) / box.height) * 2 + 1);
    const raycaster = new THREE.Raycaster();
    raycaster.params.Points = { threshold: this.radius * 0.01 };
    raycaster.setFromCamera(ndc, this.camera);
    const hit = raycaster.intersectObject(this.points)[0];
    if (!hit || hit.index === undefined) return null;
    const attribute = this.points.geometry.getAttribute('position');
    return this.absolute(new THREE.Vector3(attribute.getX(hit.index), attribute.getY(hit.index), attribute.getZ(hit.index)));
  }

  /** Screen position (CSS pixels in the canvas) of an absolute point; null behind the camera. */
  project(p: Vec3): { x: number; y: number } | null {
    const v = this.local(p).project(this.camera);
    if (v.z > 1 || v.z < -1) return null;
    const box = this.canvas.getBoundingClientRect();
    return { x: ((v.x + 1) / 2) * box.width, y: ((1 - v.y) / 2) * box.height };
  }

  fit(): void {
    const distance = this.radius * 1.6;
    this.controls.target.set(0, 0, 0);
    this.camera.position.set(distance * 0.6, -distance * 0.9, distance * 0.7);
    this.camera.near = Math.max(0.01, this.radius / 1000);
    this.camera.far = this.radius * 50;
    this.camera.updateProjectionMatrix();
    this.controls.update();
    this.requestRender();
  }

  resize(): void {
    const { clientWidth: width, clientHeight: height } = this.canvas;
    if (!width || !height) return;
    this.renderer.setSize(width, height, false);
    this.camera.aspect = width / height;
    this.camera.updateProjectionMatrix();
    this.requestRender();
  }

  requestRender(): void {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      // Damping keeps moving for a few frames after the pointer stops.
      if (this.controls.update()) this.requestRender();
      this.renderer.render(this.scene, this.camera);
      this.onRender?.();
    });
  }

  dispose(): void {
    cancelAnimationFrame(this.frame);
    this.controls.dispose();
    this.scene.traverse((object) => {
      const o = object as THREE.Mesh;
      o.geometry?.dispose();
      const material = o.material as THREE.Material | THREE.Material[] | undefined;
      if (Array.isArray(material)) material.forEach((m) => m.dispose());
      else material?.dispose();
    });
    this.renderer.dispose();
  }
}

/**
 * The radius that holds 90 % of the points around the centre: sparse reconstructions carry a few
 * far outliers, and fitting the view to those leaves the model a speck in the middle.
 */
function robustRadius(positions: Float32Array): number {
  const count = positions.length / 3;
  if (count === 0) return 10;
  const step = Math.max(1, Math.floor(count / 20000));
  const distances: number[] = [];
  for (let i = 0; i < count; i += step) distances.push(Math.hypot(positions[3 * i], positions[3 * i + 1], positions[3 * i + 2]));
  distances.sort((a, b) => a - b);
  return Math.max(1, distances[Math.floor(distances.length * 0.9)]);
}
