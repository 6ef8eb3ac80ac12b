// The scene's materials for three.js, in the browser: MeshStandardMaterial (so sun, sky light and
// shadow maps work as three does them) whose albedo is replaced by a procedural texture computed
// from the world position, so any distance has detail and no image file is needed. Each material's
// pattern is what photogrammetry meets on a real site: high-contrast grass and gravel, mottled
// galvanised steel with rust spots, near-uniform light-grey radomes (low texture, as real ones are)
// with dirt streaks and the odd sticker, finned RRU housings.
import * as THREE from 'three';
import type { MaterialName } from '../scene-types.ts';

/** Value noise and fbm in world space (hash from Inigo Quilez's integer-free variant). */
const NOISE_GLSL = /* glsl */ `
varying vec3 vProcWorld;
varying vec3 vProcNormal;
uniform float uSeed;
float procHash(vec3 p) { p = fract(p * 0.3183099 + 0.1 + uSeed * 0.0137); p *= 17.0; return fract(p.x * p.y * p.z * (p.x + p.y + p.z)); }
float procNoise(vec3 x) {
  vec3 i = floor(x); vec3 f = fract(x); f = f * f * (3.0 - 2.0 * f);
  return mix(mix(mix(procHash(i), procHash(i + vec3(1, 0, 0)), f.x), mix(procHash(i + vec3(0, 1, 0)), procHash(i + vec3(1, 1, 0)), f.x), f.y),
             mix(mix(procHash(i + vec3(0, 0, 1)), procHash(i + vec3(1, 0, 1)), f.x), mix(procHash(i + vec3(0, 1, 1)), procHash(i + vec3(1, 1, 1)), f.x), f.y), f.z);
}
// Band-limited: an octave finer than the pixel's footprint is replaced by its mean (0.5), so the
// texture does not alias (aliasing differs between views and misleads the matching) and the far
// ground costs a few noise lookups instead of all of them.
float procFootprint;
float procBand(float frequency) { return 1.0 - smoothstep(0.25, 0.5, frequency * procFootprint); }
float procNoiseLimited(vec3 p, float frequency) { float keep = procBand(frequency); return keep > 0.0 ? mix(0.5, procNoise(p * frequency), keep) : 0.5; }
float procFbmAt(vec3 p, float frequency, int octaves);
float procFbm(vec3 p, int octaves) {
  float v = 0.0; float a = 0.5; float f = 1.0;
  for (int k = 0; k < 6; k++) {
    if (k >= octaves) break;
    float keep = procBand(f);
    if (keep <= 0.0) { v += a * 0.5 * (2.0 - exp2(float(k - octaves + 1)) ); break; }
    v += a * mix(0.5, procNoise(p * f + float(k) * 3.1), keep);
    f *= 2.07; a *= 0.5;
  }
  return v;
}
// fbm of p·frequency with the footprint scaled to match.
float procFbmAt(vec3 p, float frequency, int octaves) { float saved = procFootprint; procFootprint *= frequency; float v = procFbm(p * frequency, octaves); procFootprint = saved; return v; }
// Detail at every scale from f0 up: octaves an octave apart, each with "gain" times the contrast
// of the one before (0.7-0.85: close to the pink spectrum of real surfaces), each band-limited to
// the pixel, normalised to a mean of 0.5. Real grass, gravel and concrete have features at every
// scale, and photogrammetry needs them at the scale of a few pixels whatever the distance: with
// contrast only at the coarsest and finest scales, rendered photos gave SIFT a few hundred
// features each and COLMAP placed none of them.
float procDetail(vec3 p, float f0, int octaves, float gain) {
  float v = 0.0; float a = 1.0; float total = 0.0; float f = f0;
  for (int k = 0; k < 12; k++) {
    if (k >= octaves) break;
    float keep = procBand(f);
    if (keep <= 0.0) break;
    v += a * (mix(0.5, procNoise(p * f + float(k) * 7.3), keep) - 0.5);
    total += a; f *= 2.03; a *= gain;
  }
  return 0.5 + v / max(total, 1e-6) * 1.6;
}
`;

/**
 * What the camera adds, shared by every material (one object, so setting a value sets it for all):
 * vignetting and sensor noise applied to the final colour after three's tone mapping, in the same
 * pass (a separate full-screen pass cost a third of the render time at 12 MP on SwiftShader).
 */
export const CAMERA_UNIFORMS = {
  uNoiseSeed: { value: 0 },
  uNoise: { value: 0.01 },
  uResolution: { value: new THREE.Vector2(1, 1) },
};

const CAMERA_GLSL = /* glsl */ `
uniform float uNoiseSeed; uniform float uNoise; uniform vec2 uResolution;
float cameraHash(vec2 p) { vec3 p3 = fract(vec3(p.xyx) * 0.1031 + uNoiseSeed * 0.013); p3 += dot(p3, p3.yzx + 33.33); return fract((p3.x + p3.y) * p3.z); }
vec3 cameraEffects(vec3 colour) {
  vec2 c = gl_FragCoord.xy / uResolution - 0.5;
  colour *= 1.0 - 0.45 * dot(c, c);
  // Sensor noise, stronger in the shadows (shot noise grows relative to the signal there).
  float g = (cameraHash(gl_FragCoord.xy) + cameraHash(gl_FragCoord.xy + 17.0) + cameraHash(gl_FragCoord.xy + 41.0) - 1.5) * 2.0;
  return clamp(colour + g * uNoise * (1.3 - 0.6 * colour), 0.0, 1.0);
}
`;

/** GLSL that sets `vec3 albedo` from vProcWorld (p), vProcNormal (n) and the material's uTint. */
const PATTERNS: Record<MaterialName, string> = {
  grass: `
    float d = procDetail(p, 0.25, 12, 0.82);
    float dry = smoothstep(0.55, 0.72, procDetail(p + 11.0, 0.6, 5, 0.7));
    vec3 green = mix(vec3(0.14, 0.24, 0.06), vec3(0.40, 0.46, 0.18), d);
    albedo = mix(green, vec3(0.52, 0.46, 0.26) * (0.6 + 0.8 * d), dry) * (0.55 + 0.9 * d);`,
  gravel: `
    float d = procDetail(p, 0.8, 11, 0.85);
    albedo = mix(vec3(0.30, 0.28, 0.25), vec3(0.68, 0.66, 0.61), d) * (0.8 + 0.4 * procNoiseLimited(p, 90.0));`,
  concrete: `
    float d = procDetail(p, 0.5, 10, 0.75);
    albedo = vec3(0.62, 0.61, 0.58) * (0.62 + 0.7 * d);`,
  galvanised_steel: `
    float d = procDetail(p, 1.5, 9, 0.78);
    albedo = vec3(0.55, 0.55, 0.55) * (0.6 + 0.75 * d);
    float rust = smoothstep(0.68, 0.78, procFbmAt(p + 7.0 / 6.0, 6.0, 4));
    albedo = mix(albedo, vec3(0.42, 0.22, 0.10) * (0.6 + 0.8 * d), rust);`,
  radome: `
    // Low texture, as real radomes: a faint mottle, dirt run down from the top (streaks stretched
    // along z), and the odd sticker.
    float d = procDetail(p, 3.0, 6, 0.6);
    float streak = procNoise(vec3(p.x * 30.0, p.y * 30.0, p.z * 1.5));
    albedo = uTint * (0.94 + 0.08 * d) * (1.0 - 0.07 * smoothstep(0.6, 0.9, streak));
    vec3 cell = floor(p / 0.22);
    if (procHash(cell + 5.0) > 0.93) {
      vec3 local = fract(p / 0.22);
      float inside = step(0.2, local.x) * step(local.x, 0.8) * step(0.25, local.z) * step(local.z, 0.75) + step(0.2, local.y) * step(local.y, 0.8) * step(0.25, local.z) * step(local.z, 0.75);
      float text = step(0.5, fract(local.z * 14.0)) * step(0.3, procNoiseLimited(p, 90.0));
      albedo = mix(albedo, mix(vec3(0.95), vec3(0.15), text), clamp(inside, 0.0, 1.0));
    }`,
  rru_housing: `
    float fins = 0.8 + 0.2 * step(0.5, fract((p.x + p.y) * 45.0));
    albedo = uTint * fins * (0.7 + 0.6 * procDetail(p, 4.0, 7, 0.7));`,
  dish: `
    albedo = uTint * (0.9 + 0.15 * procDetail(p, 4.0, 6, 0.6));`,
  fence: `
    albedo = vec3(0.55, 0.56, 0.57) * (0.8 + 0.3 * procNoiseLimited(p, 60.0));`,
  cabinet: `
    float vents = 1.0 - 0.25 * step(0.7, fract(p.z * 22.0)) * step(0.55, procNoise(floor(p * 3.0)));
    albedo = vec3(0.78, 0.78, 0.74) * vents * (0.7 + 0.5 * procDetail(p, 2.0, 8, 0.72));`,
  shelter_wall: `
    float panels = 0.9 + 0.1 * step(0.03, fract(p.z * 0.8)) * step(0.02, fract((p.x + p.y) * 0.8));
    albedo = vec3(0.70, 0.66, 0.58) * panels * (0.55 + 0.8 * procDetail(p, 1.0, 10, 0.8));`,
  shelter_roof: `
    albedo = vec3(0.25, 0.25, 0.26) * (0.55 + 0.8 * procDetail(p, 1.0, 9, 0.8));`,
};

export function createMaterial(name: MaterialName, tint: [number, number, number] | undefined, seed: number): THREE.Material {
  const material = new THREE.MeshStandardMaterial({ roughness: name === 'galvanised_steel' ? 0.6 : 0.9, metalness: 0, side: name === 'fence' ? THREE.DoubleSide : THREE.FrontSide });
  if (name === 'fence') {
    // Chain link seen from afar: a grey veil the ground shows through (wires are sub-pixel at 20 m).
    material.transparent = true;
    material.opacity = 0.28;
    material.depthWrite = false;
  }
  const tintColour = new THREE.Vector3(...(tint ?? [1, 1, 1]));
  material.onBeforeCompile = (shader) => {
    shader.uniforms.uSeed = { value: seed % 1000 };
    shader.uniforms.uTint = { value: tintColour };
    Object.assign(shader.uniforms, CAMERA_UNIFORMS);
    shader.vertexShader = shader.vertexShader
      .replace('#include <common>', '#include <common>\nvarying vec3 vProcWorld;\nvarying vec3 vProcNormal;')
      .replace('#include <begin_vertex>', '#include <begin_vertex>\nvProcWorld = (modelMatrix * vec4(transformed, 1.0)).xyz;\nvProcNormal = normalize(mat3(modelMatrix) * objectNormal);');
    shader.fragmentShader = shader.fragmentShader
      .replace('#include <common>', `#include <common>\n${NOISE_GLSL}\n${CAMERA_GLSL}\nuniform vec3 uTint;`)
      .replace('#include <dithering_fragment>', '#include <dithering_fragment>\ngl_FragColor.rgb = cameraEffects(gl_FragColor.rgb);')
      .replace('#include <color_fragment>', `#include <color_fragment>\n{ vec3 p = vProcWorld; vec3 n = vProcNormal; vec3 albedo = vec3(0.5); procFootprint = max(length(fwidth(p)), 1e-6);\n${PATTERNS[name]}\n diffuseColor.rgb = albedo; }`);
  };
  material.customProgramCacheKey = () => `${name}`;
  return material;
}

/** The sky: a gradient from a hazy horizon to a deeper zenith with faint, soft clouds (little to match on). */
export function createSky(seed: number): THREE.Mesh {
  const material = new THREE.ShaderMaterial({
    side: THREE.BackSide,
    depthWrite: false,
    uniforms: { uSeed: { value: seed % 1000 }, ...CAMERA_UNIFORMS },
    vertexShader: /* glsl */ `varying vec3 vDir; void main() { vDir = normalize(position); vec4 p = projectionMatrix * modelViewMatrix * vec4(position, 1.0); gl_Position = p.xyww; }`,
    fragmentShader: /* glsl */ `
      varying vec3 vDir; uniform float uSeed;
      ${CAMERA_GLSL}
      float h(vec3 p) { p = fract(p * 0.3183099 + 0.1 + uSeed * 0.0137); p *= 17.0; return fract(p.x * p.y * p.z * (p.x + p.y + p.z)); }
      float n(vec3 x) { vec3 i = floor(x); vec3 f = fract(x); f = f * f * (3.0 - 2.0 * f);
        return mix(mix(mix(h(i), h(i + vec3(1, 0, 0)), f.x), mix(h(i + vec3(0, 1, 0)), h(i + vec3(1, 1, 0)), f.x), f.y), mix(mix(h(i + vec3(0, 0, 1)), h(i + vec3(1, 0, 1)), f.x), mix(h(i + vec3(0, 1, 1)), h(i + vec3(1, 1, 1)), f.x), f.y), f.z); }
      void main() {
        float up = max(vDir.z, 0.0);
        vec3 sky = mix(vec3(0.78, 0.85, 0.92), vec3(0.32, 0.52, 0.82), pow(up, 0.6));
        float cloud = smoothstep(0.55, 0.85, n(vDir * 3.0) * 0.6 + n(vDir * 7.0) * 0.4);
        sky = mix(sky, vec3(0.93, 0.94, 0.96), cloud * 0.45 * smoothstep(0.02, 0.2, up));
        if (vDir.z < 0.0) sky = vec3(0.78, 0.84, 0.89);
        gl_FragColor = vec4(sky, 1.0);
        #include <tonemapping_fragment>
        #include <colorspace_fragment>
        gl_FragColor.rgb = cameraEffects(gl_FragColor.rgb);
      }`,
  });
  const sky = new THREE.Mesh(new THREE.SphereGeometry(1500, 32, 16), material);
  sky.renderOrder = -1;
  sky.frustumCulled = false;
  return sky;
}
