// The renderer's browser side (bundled by renderer.ts with esbuild and run in headless Chromium,
// WebGL on SwiftShader): builds the three.js scene from the parts Node sends, then renders one
// photo per call, in one pass: sun, sky light and shadows, three's filmic tone mapping at the
// photo's exposure, then vignetting and sensor noise in each material's last step
// (materials.ts CAMERA_UNIFORMS); it leaves a JPEG for Node to finish (motion blur when there is
// any, EXIF, XMP).
import * as THREE from 'three';
import { CAMERA_UNIFORMS, createMaterial, createSky } from './materials.ts';
import type { MaterialName, Vec3 } from '../scene-types.ts';

export interface PagePart {
  material: MaterialName;
  /** Float32 xyz triangle soup, base64. */
  positions: string;
  tint?: Vec3;
}

export interface PageScene {
  parts: PagePart[];
  seed: number;
  sun: { azimuthDeg: number; elevationDeg: number };
  /** Horizontal extent (m) the sun's shadow map covers around the origin, and the tower's height. */
  shadowExtentM: number;
  towerHeightM: number;
  width: number;
  height: number;
  verticalFovDeg: number;
}

export interface PageShot {
  position: Vec3;
  /** three.js camera quaternion [x, y, z, w] in the ENU world (computed in Node). */
  quaternion: [number, number, number, number];
  exposure: number;
  /** The noise's seed and strength (0..1 of full scale). */
  noiseSeed: number;
  noise: number;
  jpegQuality: number;
}

declare global {
  interface Window {
    towerScene?: (scene: PageScene) => { triangles: number };
    towerShot?: (shot: PageShot) => Promise<string>;
  }
}

function decodeFloats(base64: string): Float32Array {
  const bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
  return new Float32Array(bytes.buffer);
}

let state: { renderer: THREE.WebGLRenderer; scene: THREE.Scene; camera: THREE.PerspectiveCamera; sky: THREE.Mesh; canvas: HTMLCanvasElement } | undefined;

window.towerScene = (description) => {
  const canvas = document.createElement('canvas');
  canvas.width = description.width;
  canvas.height = description.height;
  document.body.appendChild(canvas);
  const renderer = new THREE.WebGLRenderer({ canvas, antialias: false, preserveDrawingBuffer: true });
  renderer.setSize(description.width, description.height, false);
  renderer.shadowMap.enabled = true;
  renderer.shadowMap.type = THREE.PCFShadowMap;
  renderer.toneMapping = THREE.ACESFilmicToneMapping;
  CAMERA_UNIFORMS.uResolution.value.set(description.width, description.height);
  const scene = new THREE.Scene();
  // Haze toward the horizon, the colour of the sky's horizon, so far fields fade into it.
  scene.fog = new THREE.Fog(0xc7d6e3, 250, 2600);
  let triangles = 0;
  for (const part of description.parts) {
    const geometry = new THREE.BufferGeometry();
    const positions = decodeFloats(part.positions);
    triangles += positions.length / 9;
    geometry.setAttribute('position', new THREE.BufferAttribute(positions, 3));
    geometry.computeVertexNormals();
    const mesh = new THREE.Mesh(geometry, createMaterial(part.material, part.tint, description.seed));
    mesh.castShadow = part.material !== 'grass' && part.material !== 'gravel';
    mesh.receiveShadow = true;
    scene.add(mesh);
  }
  // Sun and sky light: the sun's direction from its azimuth (clockwise from north) and elevation.
  const az = (description.sun.azimuthDeg * Math.PI) / 180, el = (description.sun.elevationDeg * Math.PI) / 180;
  const toSun = new THREE.Vector3(Math.sin(az) * Math.cos(el), Math.cos(az) * Math.cos(el), Math.sin(el));
  const sun = new THREE.DirectionalLight(0xfff4e5, 2.6);
  sun.position.copy(toSun.clone().multiplyScalar(200));
  sun.target.position.set(0, 0, description.towerHeightM * 0.4);
  sun.castShadow = true;
  sun.shadow.mapSize.set(4096, 4096);
  const extent = description.shadowExtentM;
  Object.assign(sun.shadow.camera, { left: -extent, right: extent, top: extent, bottom: -extent, near: 1, far: 500 });
  sun.shadow.bias = -0.0004;
  sun.shadow.normalBias = 0.02;
  scene.add(sun, sun.target);
  scene.add(new THREE.HemisphereLight(0xd2dce6, 0x5a5648, 1.1));
  const sky = createSky(description.seed);
  scene.add(sky);

  const camera = new THREE.PerspectiveCamera(description.verticalFovDeg, description.width / description.height, 0.3, 4000);
  state = { renderer, scene, camera, sky, canvas };
  return { triangles };
};

window.towerShot = async (shot) => {
  if (!state) throw new Error('towerScene first');
  const { renderer, scene, camera, sky, canvas } = state;
  camera.position.set(...shot.position);
  camera.quaternion.set(...shot.quaternion);
  camera.updateMatrixWorld();
  sky.position.copy(camera.position);
  renderer.toneMappingExposure = shot.exposure;
  CAMERA_UNIFORMS.uNoiseSeed.value = shot.noiseSeed;
  CAMERA_UNIFORMS.uNoise.value = shot.noise;
  renderer.render(scene, camera);
  const blob = await new Promise<Blob>((resolve, reject) => canvas.toBlob((b) => (b ? resolve(b) : reject(new Error('toBlob gave nothing'))), 'image/jpeg', shot.jpegQuality));
  const bytes = new Uint8Array(await blob.arrayBuffer());
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
};
