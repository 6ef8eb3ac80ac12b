// The scene file (`--scene FILE.json`, documented in docs/tower-flight.md) and how a seed lays it
// out. Every value may be a number (fixed) or a [min, max] range the seed draws from, so one file
// describes a family of sites and `--seed` changes the layout (sector azimuths, tilts, antenna
// models), not only the noise. What the file leaves out comes from DEFAULT_SCENE.
//
// The draws follow the ranges real sites show: panels 1.3–2.6 m tall, 0.3–0.5 m wide, 0.1–0.2 m
// deep, mechanical downtilt 0–12°, a plumb within ±2°; sectors roughly evenly spread with their own
// offset; RRUs behind the panels; dishes 0.3–1.2 m between the levels.
import { Type, type Static } from 'typebox';
import { Value } from 'typebox/value';
import { forkRandom, type Random } from './random.ts';
import type { AntennaLevel, CompoundLayout, Equipment, SceneLayout, TowerLayout, Vec3 } from './scene-types.ts';

const Range = Type.Union([Type.Number(), Type.Tuple([Type.Number(), Type.Number()])]);
type Range = Static<typeof Range>;

export const SceneDescriptionSchema = Type.Object(
  {
    site: Type.Optional(
      Type.Object(
        {
          latitude: Type.Optional(Type.Number({ minimum: -84, maximum: 84 })),
          longitude: Type.Optional(Type.Number({ minimum: -180, maximum: 180 })),
          altitude_m: Type.Optional(Type.Number()),
          slope_deg: Type.Optional(Range),
          slope_azimuth_deg: Type.Optional(Range),
          sun_azimuth_deg: Type.Optional(Range),
          sun_elevation_deg: Type.Optional(Range),
        },
        { additionalProperties: false },
      ),
    ),
    tower: Type.Optional(
      Type.Object(
        {
          type: Type.Optional(Type.Union([Type.Literal('monopole'), Type.Literal('lattice'), Type.Literal('any')])),
          height_m: Type.Optional(Range),
        },
        { additionalProperties: false },
      ),
    ),
    antennas: Type.Optional(
      Type.Object(
        {
          levels: Type.Optional(Range),
          sectors_per_level: Type.Optional(Range),
          panels_per_sector: Type.Optional(Range),
          panel_height_m: Type.Optional(Range),
          panel_width_m: Type.Optional(Range),
          panel_depth_m: Type.Optional(Range),
          downtilt_deg: Type.Optional(Range),
          plumb_deg: Type.Optional(Range),
          /** Chance that a panel has an RRU/TMA box behind it. */
          rru_chance: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
          dishes: Type.Optional(Range),
          dish_diameter_m: Type.Optional(Range),
        },
        { additionalProperties: false },
      ),
    ),
    compound: Type.Optional(
      Type.Object(
        {
          half_side_m: Type.Optional(Range),
          cabinets: Type.Optional(Range),
          shelter: Type.Optional(Type.Boolean()),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);
export type SceneDescription = Static<typeof SceneDescriptionSchema>;

/** The defaults: a site in southern Sweden near lund's photos, any tower type, one to three levels. */
export const DEFAULT_SCENE = {
  site: { latitude: 55.7005, longitude: 13.1934, altitude_m: 42, slope_deg: [0, 4] as Range, slope_azimuth_deg: [0, 360] as Range, sun_azimuth_deg: [110, 250] as Range, sun_elevation_deg: [28, 58] as Range },
  tower: { type: 'any' as 'monopole' | 'lattice' | 'any', height_m: [25, 60] as Range },
  antennas: {
    levels: [1, 3] as Range,
    sectors_per_level: [2, 4] as Range,
    panels_per_sector: [1, 3] as Range,
    panel_height_m: [1.3, 2.6] as Range,
    panel_width_m: [0.3, 0.5] as Range,
    panel_depth_m: [0.1, 0.2] as Range,
    downtilt_deg: [0, 12] as Range,
    plumb_deg: [-2, 2] as Range,
    rru_chance: 0.6,
    dishes: [0, 2] as Range,
    dish_diameter_m: [0.3, 1.2] as Range,
  },
  compound: { half_side_m: [7, 11] as Range, cabinets: [2, 4] as Range, shelter: true },
};

export class SceneDescriptionError extends Error {}

/** Reads and checks a scene file's JSON; the errors name the field (`/antennas/levels: ...`). */
export function parseSceneDescription(json: unknown): SceneDescription {
  if (!Value.Check(SceneDescriptionSchema, json)) {
    const errors = [...Value.Errors(SceneDescriptionSchema, json)].slice(0, 5).map((e) => `${e.instancePath || '/'}: ${e.message}`);
    throw new SceneDescriptionError(`the scene file does not match the schema (docs/tower-flight.md): ${errors.join('; ')}`);
  }
  return json;
}

function draw(random: Random, range: Range): number {
  return typeof range === 'number' ? range : random.between(Math.min(...range), Math.max(...range));
}
function drawInteger(random: Random, range: Range): number {
  return typeof range === 'number' ? Math.round(range) : random.integer(Math.round(Math.min(...range)), Math.round(Math.max(...range)));
}
const normaliseDeg = (deg: number) => ((deg % 360) + 360) % 360;
const DEG = Math.PI / 180;

/** The radius of the tower's structure at a height (monopole shaft, lattice legs' circumradius). */
export function towerRadiusAt(tower: TowerLayout, z: number): number {
  const t = Math.min(Math.max(z / tower.heightM, 0), 1);
  return tower.baseRadiusM + (tower.topRadiusM - tower.baseRadiusM) * t;
}

/** Lays out a concrete scene from a description and a seed (the description's gaps from DEFAULT_SCENE). */
export function layoutScene(description: SceneDescription, seed: number): SceneLayout {
  const site = { ...DEFAULT_SCENE.site, ...description.site };
  const towerSpec = { ...DEFAULT_SCENE.tower, ...description.tower };
  const spec = { ...DEFAULT_SCENE.antennas, ...description.antennas };
  const compoundSpec = { ...DEFAULT_SCENE.compound, ...description.compound };
  const random = forkRandom(seed, 'layout');

  const type = towerSpec.type === 'any' ? random.pick(['monopole', 'lattice'] as const) : towerSpec.type;
  const heightM = draw(random, towerSpec.height_m);
  const tower: TowerLayout =
    type === 'monopole'
      ? { type, heightM, baseRadiusM: random.between(0.55, 0.8), topRadiusM: random.between(0.25, 0.4), legRadiusM: 0, bayHeightM: 0 }
      : { type, heightM, baseRadiusM: heightM * random.between(0.06, 0.08), topRadiusM: random.between(0.7, 1.0), legRadiusM: random.between(0.05, 0.08), bayHeightM: random.between(2.2, 3.2) };

  // Levels from the top down: the top one's antennas end just under the top, the others 3.5–6 m apart.
  const levelCount = drawInteger(random, spec.levels);
  const levels: AntennaLevel[] = [];
  const equipment: Equipment[] = [];
  let levelHeight = heightM - random.between(1.4, 1.9);
  for (let level = 0; level < levelCount; level++) {
    const sectorCount = drawInteger(random, spec.sectors_per_level);
    const offset = random.between(0, 360);
    const sectors = Array.from({ length: sectorCount }, (_, s) => ({ azimuthDeg: normaliseDeg(offset + (360 * s) / sectorCount + random.between(-12, 12)) }));
    // One antenna model per level (operators fit a level alike), each panel with its own tilt.
    const model = { height: draw(random, spec.panel_height_m), width: draw(random, spec.panel_width_m), depth: draw(random, spec.panel_depth_m) };
    const grey = random.between(0.72, 0.93);
    const colour: Vec3 = [grey, grey * random.between(0.98, 1.01), grey * random.between(0.97, 1.02)];
    const panelCounts = sectors.map(() => drawInteger(random, spec.panels_per_sector));
    const spacing = model.width + random.between(0.25, 0.45);
    // The sector frames form a polygon around the tower: each frame's half width (r·tan(180°/n)
    // for n sectors) must hold its panels, with room for the sectors' ±12° scatter.
    const halfSpan = (Math.max(...panelCounts) * spacing) / 2 + 0.35;
    const polygonRadius = sectorCount > 2 ? halfSpan / Math.tan(Math.PI / sectorCount) : 0;
    const mountRadiusM = Math.max(towerRadiusAt(tower, levelHeight) + random.between(0.7, 1.1), polygonRadius);
    levels.push({ heightM: levelHeight, mountRadiusM, sectors });
    sectors.forEach((sector, s) => {
      const panels = panelCounts[s];
      for (let k = 0; k < panels; k++) {
        const lateral = (k - (panels - 1) / 2) * spacing;
        const az = sector.azimuthDeg * DEG;
        const front: Vec3 = [Math.sin(az), Math.cos(az), 0];
        const right: Vec3 = [Math.cos(az), -Math.sin(az), 0];
        // The panel hangs in front of its mount pipe: the pipe at the mount radius, the panel's centre a half depth + clamp further out.
        const out = mountRadiusM + model.depth / 2 + 0.12;
        const centre: Vec3 = [front[0] * out + right[0] * lateral, front[1] * out + right[1] * lateral, levelHeight + random.between(-0.1, 0.1)];
        const id = `L${level + 1}-S${s + 1}-P${k + 1}`;
        equipment.push({
          id,
          type: 'panel_antenna',
          centre,
          azimuthDeg: normaliseDeg(sector.azimuthDeg + random.between(-3, 3)),
          downtiltDeg: draw(random, spec.downtilt_deg),
          plumbDeg: draw(random, spec.plumb_deg),
          widthM: model.width,
          heightM: model.height,
          depthM: model.depth,
          level,
          sector: s,
          colour,
        });
        if (random.chance(spec.rru_chance)) {
          // An RRU behind the panel, on the same pipe, below the panel's centre.
          const back = mountRadiusM - 0.16;
          const size = { w: random.between(0.26, 0.4), h: random.between(0.38, 0.6), d: random.between(0.14, 0.24) };
          equipment.push({
            id: `${id}-RRU`,
            type: 'ancillary_box',
            centre: [front[0] * back + right[0] * lateral, front[1] * back + right[1] * lateral, levelHeight - model.height / 2 + size.h / 2 + random.between(0, 0.3)],
            azimuthDeg: normaliseDeg(sector.azimuthDeg),
            downtiltDeg: 0,
            plumbDeg: 0,
            widthM: size.w,
            heightM: size.h,
            depthM: size.d,
            level,
            sector: s,
            colour: random.pick<Vec3>([[0.55, 0.56, 0.57], [0.82, 0.82, 0.8], [0.3, 0.31, 0.32]]),
          });
        }
      }
    });
    levelHeight -= random.between(3.5, 6);
    if (levelHeight < heightM * 0.45) break;
  }

  // Microwave dishes between the levels (or under the lowest), each on its own short arm.
  const dishCount = drawInteger(random, spec.dishes);
  const lowest = levels.at(-1)!.heightM;
  for (let d = 0; d < dishCount; d++) {
    const diameter = draw(random, spec.dish_diameter_m);
    const z = lowest - random.between(2.5, 5) - d * random.between(1.5, 2.5);
    const az = random.between(0, 360);
    const r = towerRadiusAt(tower, z) + 0.35 + diameter * 0.2;
    equipment.push({
      id: `MW${d + 1}`,
      type: 'microwave_antenna',
      centre: [Math.sin(az * DEG) * r, Math.cos(az * DEG) * r, z],
      azimuthDeg: normaliseDeg(az),
      downtiltDeg: random.between(-1.5, 1.5),
      plumbDeg: 0,
      widthM: diameter,
      heightM: diameter,
      depthM: diameter * random.between(0.28, 0.4),
      level: levels.length - 1,
      sector: -1,
      colour: [0.9, 0.9, 0.88],
    });
  }

  return {
    seed,
    site: {
      base: { latitude: site.latitude, longitude: site.longitude, altitude: site.altitude_m },
      slopeDeg: draw(random, site.slope_deg),
      slopeAzimuthDeg: draw(random, site.slope_azimuth_deg),
      sun: { azimuthDeg: draw(random, site.sun_azimuth_deg), elevationDeg: draw(random, site.sun_elevation_deg) },
    },
    tower,
    levels,
    equipment,
    compound: layoutCompound(random, compoundSpec, tower),
  };
}

function layoutCompound(random: Random, spec: typeof DEFAULT_SCENE.compound, tower: TowerLayout): CompoundLayout {
  const halfSideM = Math.max(draw(random, spec.half_side_m), tower.baseRadiusM + 4);
  const cabinets: CompoundLayout['cabinets'] = [];
  const count = drawInteger(random, spec.cabinets);
  // Cabinets in a row on one side of the pad, the shelter on another.
  const side = random.integer(0, 3);
  const along = (k: number) => (k - (count - 1) / 2) * 1.1;
  const edge = halfSideM - 1.6;
  for (let k = 0; k < count; k++) {
    const local: [number, number] = [along(k), edge];
    const [x, y] = rotateQuarter(local, side);
    const size: Vec3 = [random.between(0.7, 0.9), random.between(0.6, 0.8), random.between(1.4, 1.9)];
    cabinets.push({ centre: [x, y, size[2] / 2], size, yawDeg: side * 90 });
  }
  let shelter: CompoundLayout['shelter'] = null;
  if (spec.shelter) {
    const size: Vec3 = [random.between(2.6, 3.4), random.between(2.2, 2.8), random.between(2.6, 3.0)];
    const [x, y] = rotateQuarter([0, -(halfSideM - size[1] / 2 - 1)], side);
    shelter = { centre: [x, y, size[2] / 2], size, yawDeg: side * 90 };
  }
  return { halfSideM, fenceHeightM: random.between(2.0, 2.4), cabinets, shelter };
}

function rotateQuarter([x, y]: [number, number], quarters: number): [number, number] {
  for (let q = 0; q < quarters; q++) [x, y] = [y, -x];
  return [x, y];
}

/**
 * The ground's height at a horizontal position: the compound is a levelled pad (z = 0, the tower's
 * base) out to 2 m beyond the fence; past that the terrain rises toward slopeAzimuthDeg (and falls
 * away behind) at slopeDeg, continuous at the pad's edge.
 */
export function groundHeight(layout: SceneLayout, x: number, y: number): number {
  const az = layout.site.slopeAzimuthDeg * DEG;
  const along = x * Math.sin(az) + y * Math.cos(az);
  const flat = layout.compound.halfSideM + 2;
  return Math.tan(layout.site.slopeDeg * DEG) * Math.sign(along) * Math.max(Math.abs(along) - flat, 0);
}
