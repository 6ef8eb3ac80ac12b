// The 3D scene of an inspection (three.js): the point cloud with its colours, the mesh with its
// vertex colours (shown with the cloud, alone, or both), the calibrated cameras as small pyramids
// oriented by their rotation, snapping the pointer to the surface for measurements, and a
// projection of 3D positions to the screen (for the DOM markers of annotations). Everything is in
// the output coordinate system (metres, x east, y north, z up) minus `centre`, so float32 keeps
// millimetres. Loaded on demand with the 3D tab only. Past 350 lines: one class owns the renderer,
// the controls and the adaptive detail, which work on each other's state; what is drawn over the
// model is built elsewhere (item-boxes.ts) and added with addOverlay.
import * as THREE from 'three';
import { OrbitControls } from 'three/examples/jsm/controls/OrbitControls.js';
import type { PlyCloud, PlyMesh } from '../../lib/ply';
import { PICK_MAX_POINTS, snapToSurface, type Snap } from './snap';

export type Vec3 = [number, number, number];
export type Show = 'cloud' | 'mesh' | 'both';

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
  /** What pointer snapping searches: the cloud, thinned to PICK_MAX_POINTS (never drawn). */
  private pickPoints: THREE.Points | undefined;
  private mesh: THREE.Mesh | undefined;
  private readonly overlay = new THREE.Group();
  private readonly measureGroup = new THREE.Group();
  private readonly snapMarker: THREE.Sprite;
  private frame = 0;
  private frames = 0;
  /** While the view moves, the cloud's first ceil(count / 2^detail) points are drawn (its coarse-to-fine levels). */
  private detail = 0;
  /** The last frame drawn in motion (rAF time), 0 after a frame at rest. */
  private movedAt = 0;
  /** The cloud's coarse-to-fine levels (0: drawn whole always). */
  private cloudLevels = 0;
  /** The level drawn at rest: 0 (whole) unless motion measured the whole too slow (adaptDetail). */
  private restDetail = 0;
  private radius = 10;
  onRender: (() => void) | undefined;

  /** `centre`: the absolute position the scene's origin stands for (the cloud's or the mesh's middle). */
  constructor(
    readonly canvas: HTMLCanvasElement,
    readonly centre: Vec3,
  ) {
    // preserveDrawingBuffer: the canvas can be read back (tests check that points were drawn).
    this.renderer = new THREE.WebGLRenderer({ canvas, antialias: true, preserveDrawingBuffer: true });
    this.renderer.setPixelRatio(Math.min(window.devicePixelRatio, 2));
    // The clouds' and meshes' colours are the photos' bytes: drawn as they are, not taken for linear
    // light and brightened to sRGB (which washed them out); the scene's own colours likewise.
    this.renderer.outputColorSpace = THREE.LinearSRGBColorSpace;
    this.scene.background = asIs(0x1b2430);
    this.camera = new THREE.PerspectiveCamera(55, 1, 0.05, 5000);
    this.camera.up.set(0, 0, 1); // z is up in the output system
    this.controls = new OrbitControls(this.camera, canvas);
    this.controls.enableDamping = true;
    this.controls.listenToKeyEvents(canvas);
    this.controls.addEventListener('change', () => this.requestRender());
    // Lights only shade a mesh without colours; the coloured one is drawn as photographed.
    this.scene.add(new THREE.HemisphereLight(0xffffff, 0x444444, 2.5));
    this.snapMarker = snapSprite();
    this.scene.add(this.overlay, this.measureGroup, this.snapMarker);
    this.resize();
  }

  setCloud(cloud: PlyCloud): void {
    const geometry = new THREE.BufferGeometry();
    geometry.setAttribute('position', new THREE.BufferAttribute(cloud.positions, 3));
    if (cloud.colors) geometry.setAttribute('color', new THREE.BufferAttribute(cloud.colors, 3, true));
    geometry.computeBoundingSphere();
    this.radius = robustRadius(cloud.positions);
    const material = new THREE.PointsMaterial({ size: pointSize(cloud.count), sizeAttenuation: false, vertexColors: !!cloud.colors, color: cloud.colors ? 0xffffff : 0xcfd8e3 });
    this.points = new THREE.Points(geometry, material);
    this.points.position.copy(this.local(cloud.centre));
    this.scene.add(this.points);
    this.cloudLevels = cloud.levels ?? 0;
    this.restDetail = 0;
    // The first frame in motion draws at most FIRST_MOVING_POINTS: on the software renderer a 3M
    // frame blocked the page 5 s before the next frame could say it was slow; a GPU gets its
    // whole cloud back within a few frames (one level per fast frame).
    this.detail = Math.min(this.cloudLevels, Math.max(0, Math.ceil(Math.log2(cloud.count / FIRST_MOVING_POINTS))));
    this.pickPoints = thinned(this.points, PICK_MAX_POINTS);
    this.fit();
  }

  /** The mesh; `offset`: what its file's coordinates are relative to (offset_3d_xyz). */
  setMesh(mesh: PlyMesh, offset: Vec3): void {
    const geometry = new THREE.BufferGeometry();
    geometry.setAttribute('position', new THREE.BufferAttribute(mesh.positions, 3));
    if (mesh.colors) geometry.setAttribute('color', new THREE.BufferAttribute(mesh.colors, 3, true));
    geometry.setIndex(new THREE.BufferAttribute(mesh.indices, 1));
    geometry.computeBoundingSphere();
    const options = { vertexColors: !!mesh.colors, side: THREE.DoubleSide, polygonOffset: true, polygonOffsetFactor: 1, polygonOffsetUnits: 1 };
    // Behind the points by a hair (polygon offset): with both shown, the cloud is not hidden in its own surface.
    const material = mesh.colors ? new THREE.MeshBasicMaterial(options) : new THREE.MeshLambertMaterial({ ...options, color: asIs(0xb8c2cc) });
    if (!mesh.colors) geometry.computeVertexNormals();
    this.mesh = new THREE.Mesh(geometry, material);
    this.mesh.position.copy(this.local([offset[0] + mesh.centre[0], offset[1] + mesh.centre[1], offset[2] + mesh.centre[2]]));
    this.scene.add(this.mesh);
    if (!this.points) {
      this.radius = robustRadius(mesh.positions);
      this.fit();
    }
    this.requestRender();
  }

  show(what: Show): void {
    if (this.points) this.points.visible = what !== 'mesh' || !this.mesh;
    if (this.mesh) this.mesh.visible = what !== 'cloud' || !this.points;
    this.requestRender();
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
    const material = new THREE.LineBasicMaterial({ color: asIs(0x53a1ff) });
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
    const material = new THREE.MeshBasicMaterial({ color: asIs(0xffc400) });
    for (const p of positions) {
      const mesh = new THREE.Mesh(geometry, material);
      mesh.position.copy(this.local(p));
      this.overlay.add(mesh);
    }
    this.requestRender();
  }

  /** Something drawn over the model, built in scene coordinates (local()); returns its removal. */
  addOverlay(object: THREE.Object3D): () => void {
    this.overlay.add(object);
    this.requestRender();
    return () => {
      this.overlay.remove(object);
      this.requestRender();
    };
  }

  /** Looks at an absolute point from the south-east, above, at `distance`. */
  focus(p: Vec3, distance: number): void {
    const target = this.local(p);
    this.controls.target.copy(target);
    this.camera.position.copy(target).add(new THREE.Vector3(0.6, -0.9, 0.45).normalize().multiplyScalar(distance));
    this.controls.update();
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

  /**
   * The surface point under a pointer (client coordinates), absolute: on the mesh when it is shown
   * and under the pointer, else the cloud's point nearest the camera within a few pixels; null
   * when neither is there. The snap marker moves to it.
   */
  snap(clientX: number, clientY: number): (Snap & { point: Vec3 }) | null {
    const box = this.canvas.getBoundingClientRect();
    const found = snapToSurface({
      camera: this.camera,
      pointer: new THREE.Vector2(clientX - box.left, clientY - box.top),
      viewport: { width: box.width, height: box.height },
      mesh: this.mesh?.visible ? this.mesh : undefined,
      points: this.points?.visible ? this.pickPoints : undefined,
    });
    this.showSnap(found?.local ?? null);
    return found ? { ...found, point: this.absolute(found.local) } : null;
  }

  /** The snap marker at a local position, or hidden. */
  showSnap(local: THREE.Vector3 | null): void {
    this.snapMarker.visible = !!local;
    if (local) this.snapMarker.position.copy(local);
    this.requestRender();
  }

  /** Screen position (CSS pixels in the canvas) of an absolute point; null behind the camera. */
  project(p: Vec3): { x: number; y: number } | null {
    const v = this.local(p).project(this.camera);
    if (v.z > 1 || v.z < -1) return null;
    const box = this.canvas.getBoundingClientRect();
    return { x: ((v.x + 1) / 2) * box.width, y: ((1 - v.y) / 2) * box.height };
  }

  /** Looks at the model's middle from the south-east, above, far enough to see 90 % of it. */
  fit(): void {
    // A portrait view (a phone) is narrower than it is high: back off so the model fits across.
    const distance = (this.radius * 1.6) / Math.min(1, this.camera.aspect);
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
    this.frame = requestAnimationFrame((time) => {
      this.frame = 0;
      // Damping keeps moving for a few frames after the pointer stops.
      const moving = this.controls.update();
      if (moving) this.requestRender();
      this.adaptDetail(moving, time);
      this.renderer.render(this.scene, this.camera);
      // Frames drawn so far: what a frame rate is counted from (the screenshot script does).
      this.canvas.dataset.frames = String(++this.frames);
      this.onRender?.();
    });
  }

  /**
   * Thins the cloud while the view moves when frames come slower than 25 per second (40 ms): by as
   * many halvings as the frame is over 30 ms, and thickens it again a level at a time when they
   * come faster than 50 (20 ms). At rest it is drawn whole, unless the frames in motion said that
   * would take over REST_FRAME_MS (estimated as the last interval times 2 per level: on the
   * software renderer 3M points at rest blocked the page 3.5-4.9 s after every orbit). Measured (bench/viewer3d.ts, bench/
   * README "The 3D tab with millions of points"): Chromium's software renderer on 2 cores took
   * 1.7 s a frame for 1M points and 0.12 s for 20k, so no fixed budget is fluid there, while a GPU
   * draws millions per frame; the interval between frames in motion tells the device apart. The
   * draw range is a prefix of the cloud's coarse-to-fine levels (lib/ply.ts): no copy, no upload.
   */
  private adaptDetail(moving: boolean, time: number): void {
    if (!this.points || !this.cloudLevels) return;
    const interval = this.movedAt ? time - this.movedAt : 0;
    if (moving && interval > 0) this.restDetail = Math.min(this.cloudLevels, Math.max(0, this.detail - Math.floor(Math.log2(REST_FRAME_MS / interval))));
    if (moving && interval > 40) this.detail = Math.min(this.cloudLevels, this.detail + Math.max(1, Math.round(Math.log2(interval / 30))));
    else if (moving && interval > 0 && interval < 20) this.detail = Math.max(0, this.detail - 1);
    this.movedAt = moving ? time : 0;
    const count = this.points.geometry.getAttribute('position').count;
    this.points.geometry.setDrawRange(0, Math.ceil(count / 2 ** (moving ? this.detail : this.restDetail)));
    this.canvas.dataset.pointsDrawn = String(Math.min(count, this.points.geometry.drawRange.count));
  }

  dispose(): void {
    cancelAnimationFrame(this.frame);
    this.controls.dispose();
    this.snapMarker.material.map?.dispose();
    this.pickPoints?.geometry.dispose();
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

/** The longest a frame at rest may block the page, by the estimate of adaptDetail. */
const REST_FRAME_MS = 1000;

/** Points of the first frame in motion (see setCloud). */
const FIRST_MOVING_POINTS = 250_000;

/** A colour written to the screen as these bytes (the renderer's output is not converted). */
export function asIs(hex: number): THREE.Color {
  return new THREE.Color().setRGB(((hex >> 16) & 255) / 255, ((hex >> 8) & 255) / 255, (hex & 255) / 255, THREE.LinearSRGBColorSpace);
}

/**
 * Pixels per point (of the drawing buffer): 3 keeps a sparse model's few thousand points visible;
 * a dense cloud of millions at 3 px is a blur of overlapping squares, 1-2 px keeps its detail.
 */
function pointSize(count: number): number {
  return count < 100_000 ? 3 : count < 1_000_000 ? 2 : 1.5;
}

/** Every k-th point of a cloud, at most `max`, sharing its placement: what snapping searches. */
function thinned(points: THREE.Points, max: number): THREE.Points {
  const source = points.geometry.getAttribute('position') as THREE.BufferAttribute;
  const step = Math.max(1, Math.ceil(source.count / max));
  if (step === 1) return points;
  const positions = new Float32Array(Math.ceil(source.count / step) * 3);
  for (let i = 0, j = 0; i < source.count; i += step, j += 3) positions.set(source.array.subarray(3 * i, 3 * i + 3) as Float32Array, j);
  const geometry = new THREE.BufferGeometry();
  geometry.setAttribute('position', new THREE.BufferAttribute(positions, 3));
  geometry.computeBoundingSphere();
  const pick = new THREE.Points(geometry);
  pick.position.copy(points.position);
  pick.updateMatrixWorld();
  return pick;
}

/** A ring that marks where a click would measure: drawn over everything, a fixed size on screen. */
function snapSprite(): THREE.Sprite {
  const size = 64;
  const canvas = document.createElement('canvas');
  canvas.width = canvas.height = size;
  const context = canvas.getContext('2d')!;
  context.lineWidth = 6;
  context.strokeStyle = '#101418';
  context.beginPath();
  context.arc(size / 2, size / 2, size / 2 - 8, 0, Math.PI * 2);
  context.stroke();
  context.lineWidth = 3;
  context.strokeStyle = '#7CFF6B';
  context.stroke();
  context.fillStyle = '#7CFF6B';
  context.fillRect(size / 2 - 2, size / 2 - 2, 4, 4);
  const sprite = new THREE.Sprite(new THREE.SpriteMaterial({ map: new THREE.CanvasTexture(canvas), depthTest: false, sizeAttenuation: false }));
  sprite.scale.set(0.05, 0.05, 1);
  sprite.renderOrder = 10;
  sprite.visible = false;
  return sprite;
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
