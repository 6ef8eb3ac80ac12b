// The scene as triangles, one part per material and piece of equipment (local ENU, see
// scene-types.ts): the tower (monopole shaft or three-legged lattice with bracing), per level the
// sector frames, mount pipes, panels with their brackets, RRUs, the dishes on arms, and the ground:
// terrain, the compound's gravel, a concrete pad, the fence, cabinets and a shelter. The renderer
// draws these parts and the reference cloud samples the same triangles, so the truth and the
// photos cannot disagree.
import { groundHeight, towerRadiusAt } from './scene-description.ts';
import { add, box, disc, heightField, normalise, quad, scale, tube, yawedBox, type Axes } from './primitives.ts';
import type { Equipment, MaterialName, MeshPart, SceneLayout, Vec3 } from './scene-types.ts';

const DEG = Math.PI / 180;
/** Half side of the terrain drawn around the site (m). */
const FAR = 1500;

/**
 * The equipment's axes (scene-types.ts `Equipment`): the boresight at the azimuth, tilted down by
 * the downtilt (the top leans forward), then the long axis leaned to the right by the plumb.
 */
export function equipmentAxes(e: Pick<Equipment, 'azimuthDeg' | 'downtiltDeg' | 'plumbDeg'>): Axes {
  const az = e.azimuthDeg * DEG, tilt = e.downtiltDeg * DEG, plumb = e.plumbDeg * DEG;
  const front0: Vec3 = [Math.sin(az), Math.cos(az), 0];
  const right0: Vec3 = [Math.cos(az), -Math.sin(az), 0];
  const front = add(scale(front0, Math.cos(tilt)), [0, 0, 1], -Math.sin(tilt));
  const up0 = add(scale([0, 0, 1], Math.cos(tilt)), front0, Math.sin(tilt));
  const up = add(scale(up0, Math.cos(plumb)), right0, Math.sin(plumb));
  const right = add(scale(right0, Math.cos(plumb)), up0, -Math.sin(plumb));
  return { right, up, front };
}

class PartList {
  readonly parts: MeshPart[] = [];
  add(material: MaterialName, group: MeshPart['group'], build: (out: number[]) => void, extra: Pick<MeshPart, 'tint' | 'equipmentId'> = {}): void {
    const out: number[] = [];
    build(out);
    if (out.length) this.parts.push({ material, group, positions: new Float32Array(out), ...extra });
  }
}

export function sceneParts(layout: SceneLayout): MeshPart[] {
  const list = new PartList();
  addTower(list, layout);
  addMounts(list, layout);
  for (const e of layout.equipment) addEquipment(list, layout, e);
  addGround(list, layout);
  return list.parts;
}

function addTower(list: PartList, layout: SceneLayout): void {
  const { tower } = layout;
  if (tower.type === 'monopole') {
    list.add('galvanised_steel', 'tower', (out) => {
      tube(out, [0, 0, 0], [0, 0, tower.heightM], tower.baseRadiusM, tower.topRadiusM, 28);
      disc(out, [0, 0, tower.heightM], [0, 0, 1], tower.topRadiusM, 28);
      // Flanges where the shaft's sections join, every ~12 m.
      for (let z = 12; z < tower.heightM - 2; z += 12) {
        const r = towerRadiusAt(tower, z) + 0.04;
        tube(out, [0, 0, z - 0.03], [0, 0, z + 0.03], r, r, 28, true);
      }
      // A cable ladder up the shaft's side, on the side away from the first sector.
      const side = ((layout.levels[0]?.sectors[0]?.azimuthDeg ?? 0) + 180) * DEG;
      for (const offset of [-0.12, 0.12]) {
        const at = (z: number): Vec3 => {
          const r = towerRadiusAt(tower, z) + 0.06;
          return [Math.sin(side) * r + Math.cos(side) * offset, Math.cos(side) * r - Math.sin(side) * offset, z];
        };
        tube(out, at(1), at(tower.heightM - 0.5), 0.015, 0.015, 6);
      }
    });
    list.add('concrete', 'ground', (out) => yawedBox(out, [0, 0, 0.12], [tower.baseRadiusM * 2 + 1.6, tower.baseRadiusM * 2 + 1.6, 0.3], 0));
    return;
  }
  // Lattice: three legs, a horizontal and X bracing on each face per bay.
  const legAngles = [0, 120, 240].map((a) => (a + layout.seed * 37) * DEG);
  const leg = (k: number, z: number): Vec3 => {
    const r = towerRadiusAt(tower, z);
    return [Math.sin(legAngles[k % 3]) * r, Math.cos(legAngles[k % 3]) * r, z];
  };
  list.add('galvanised_steel', 'tower', (out) => {
    for (let k = 0; k < 3; k++) tube(out, leg(k, 0), leg(k, tower.heightM), tower.legRadiusM, tower.legRadiusM * 0.75, 8);
    const bays = Math.max(1, Math.round(tower.heightM / tower.bayHeightM));
    const bay = tower.heightM / bays;
    for (let b = 0; b <= bays; b++) {
      const z0 = b * bay, z1 = Math.min((b + 1) * bay, tower.heightM);
      for (let k = 0; k < 3; k++) {
        tube(out, leg(k, z0), leg(k + 1, z0), 0.03, 0.03, 6);
        if (b < bays) {
          tube(out, leg(k, z0), leg(k + 1, z1), 0.025, 0.025, 6);
          tube(out, leg(k + 1, z0), leg(k, z1), 0.025, 0.025, 6);
        }
      }
    }
  });
  list.add('concrete', 'ground', (out) => {
    for (let k = 0; k < 3; k++) tube(out, add(leg(k, 0), [0, 0, -0.1]), add(leg(k, 0), [0, 0, 0.35]), 0.45, 0.45, 16, true);
  });
}

/** Per level: a frame per sector (arms from the tower, a top and bottom face pipe) and a vertical pipe per panel. */
function addMounts(list: PartList, layout: SceneLayout): void {
  layout.levels.forEach((level, levelIndex) => {
    const panels = layout.equipment.filter((e) => e.level === levelIndex && e.type === 'panel_antenna');
    const tallest = Math.max(...panels.map((p) => p.heightM), 1.4);
    list.add('galvanised_steel', 'tower', (out) => {
      for (const [s, sector] of level.sectors.entries()) {
        const az = sector.azimuthDeg * DEG;
        const front: Vec3 = [Math.sin(az), Math.cos(az), 0];
        const right: Vec3 = [Math.cos(az), -Math.sin(az), 0];
        const mine = panels.filter((p) => p.sector === s);
        const laterals = mine.map((p) => (p.centre[0] - front[0] * (level.mountRadiusM + p.depthM / 2 + 0.12)) * right[0] + (p.centre[1] - front[1] * (level.mountRadiusM + p.depthM / 2 + 0.12)) * right[1]);
        const half = Math.max(0.5, ...laterals.map((l) => Math.abs(l) + 0.3));
        for (const dz of [tallest / 2 - 0.25, -tallest / 2 + 0.25]) {
          const z = level.heightM + dz;
          const inner = towerRadiusAt(layout.tower, z) * (layout.tower.type === 'lattice' ? 0.5 : 1);
          const frame = add(scale(front, level.mountRadiusM), [0, 0, z]);
          tube(out, add(scale(front, inner), [0, 0, z]), frame, 0.045, 0.045, 8);
          tube(out, add(frame, right, -half), add(frame, right, half), 0.035, 0.035, 8);
        }
        for (const lateral of laterals) {
          const base = add(add(scale(front, level.mountRadiusM + 0.06), right, lateral), [0, 0, level.heightM]);
          tube(out, add(base, [0, 0, -tallest / 2 - 0.3]), add(base, [0, 0, tallest / 2 + 0.3]), 0.03, 0.03, 8, true);
        }
      }
    });
  });
}

function addEquipment(list: PartList, layout: SceneLayout, e: Equipment): void {
  const axes = equipmentAxes(e);
  const extra = { tint: e.colour, equipmentId: e.id };
  if (e.type === 'panel_antenna') {
    list.add('radome', 'tower', (out) => box(out, e.centre, axes, { right: e.widthM / 2, up: e.heightM / 2, front: e.depthM / 2 }), extra);
    // End caps, connectors under the bottom cap, and brackets from the back to the pipe.
    list.add('galvanised_steel', 'tower', (out) => {
      for (const end of [1, -1]) box(out, add(e.centre, axes.up, end * (e.heightM / 2 + 0.01)), axes, { right: e.widthM / 2 + 0.005, up: 0.012, front: e.depthM / 2 + 0.005 });
      for (const k of [-1, 1]) {
        const foot = add(add(e.centre, axes.up, -e.heightM / 2 - 0.02), axes.right, k * e.widthM * 0.22);
        tube(out, foot, add(foot, axes.up, -0.07), 0.014, 0.014, 6, true);
      }
      const level = layout.levels[e.level];
      const az = (layout.levels[e.level].sectors[e.sector]?.azimuthDeg ?? e.azimuthDeg) * DEG;
      const pipeFront: Vec3 = [Math.sin(az), Math.cos(az), 0];
      for (const end of [0.8, -0.8]) {
        const back = add(add(e.centre, axes.up, (end * e.heightM) / 2), axes.front, -e.depthM / 2);
        const toPipe = (level.mountRadiusM + 0.06) - (back[0] * pipeFront[0] + back[1] * pipeFront[1]);
        tube(out, back, add(back, pipeFront, toPipe), 0.02, 0.02, 6);
      }
    });
    return;
  }
  if (e.type === 'ancillary_box') {
    list.add('rru_housing', 'tower', (out) => box(out, e.centre, axes, { right: e.widthM / 2, up: e.heightM / 2, front: e.depthM / 2 }), extra);
    return;
  }
  // A microwave dish: a shroud (short tube), a slightly domed radome in front, a back cone and an arm to the tower.
  const r = e.widthM / 2;
  const rim = add(e.centre, axes.front, e.depthM / 2);
  const back = add(e.centre, axes.front, -e.depthM / 2);
  list.add('dish', 'tower', (out) => {
    tube(out, add(rim, axes.front, -e.depthM * 0.55), rim, r, r, 32);
    disc(out, rim, axes.front, r, 32, Math.min(0.04, r * 0.08));
    tube(out, back, add(rim, axes.front, -e.depthM * 0.55), r * 0.35, r, 24);
    disc(out, back, scale(axes.front, -1), r * 0.35, 16);
  }, extra);
  list.add('galvanised_steel', 'tower', (out) => {
    const inner = towerRadiusAt(layout.tower, back[2]) * (layout.tower.type === 'lattice' ? 0.5 : 1);
    const dir = normalise([back[0], back[1], 0]);
    tube(out, [dir[0] * inner, dir[1] * inner, back[2]], back, 0.04, 0.04, 8);
  });
}

function addGround(list: PartList, layout: SceneLayout): void {
  const half = layout.compound.halfSideM;
  const extent = 90;
  const height = (x: number, y: number) => groundHeight(layout, x, y);
  list.add('grass', 'ground', (out) => {
    heightField(out, [-extent, -extent], [extent, extent], 2, height, (x, y) => Math.max(Math.abs(x), Math.abs(y)) < half);
    // Fields out to the horizon (coarser: seen only far away), so no photo sees the world's edge.
    // They reach 30 m under the fine grid's edge, 5 cm lower: where the two grids meet, their
    // T-junctions would leave pixel cracks with the sky showing through; the coarse field fills them.
    const coarse = (x: number, y: number) => height(x, y) - (Math.max(Math.abs(x), Math.abs(y)) <= extent ? 0.05 : 0);
    heightField(out, [-FAR, -FAR], [FAR, FAR], 30, coarse, (x, y) => Math.max(Math.abs(x), Math.abs(y)) < extent - 30);
  });
  list.add('gravel', 'ground', (out) => heightField(out, [-half, -half], [half, half], half, () => 0));
  // Fence: posts every ~2.5 m, a top rail, and mesh panels (drawn as chain link by the renderer).
  const corners: Vec3[] = [[-half, -half, 0], [half, -half, 0], [half, half, 0], [-half, half, 0]];
  const fenceHeight = layout.compound.fenceHeightM;
  list.add('galvanised_steel', 'ground', (out) => {
    for (let k = 0; k < 4; k++) {
      const a = corners[k], b = corners[(k + 1) % 4];
      const posts = Math.ceil((2 * half) / 2.5);
      for (let p = 0; p < posts; p++) {
        const at = add(a, add(b, a, -1), p / posts);
        tube(out, at, add(at, [0, 0, fenceHeight]), 0.03, 0.03, 8, true);
      }
      tube(out, add(a, [0, 0, fenceHeight]), add(b, [0, 0, fenceHeight]), 0.02, 0.02, 6);
    }
  });
  list.add('fence', 'ground', (out) => {
    for (let k = 0; k < 4; k++) {
      const a = corners[k], b = corners[(k + 1) % 4];
      quad(out, a, b, add(b, [0, 0, fenceHeight]), add(a, [0, 0, fenceHeight]));
      quad(out, b, a, add(a, [0, 0, fenceHeight]), add(b, [0, 0, fenceHeight]));
    }
  });
  list.add('cabinet', 'ground', (out) => {
    for (const c of layout.compound.cabinets) yawedBox(out, c.centre, c.size, c.yawDeg);
  });
  const shelter = layout.compound.shelter;
  if (shelter) {
    list.add('shelter_wall', 'ground', (out) => yawedBox(out, shelter.centre, shelter.size, shelter.yawDeg));
    list.add('shelter_roof', 'ground', (out) => yawedBox(out, add(shelter.centre, [0, 0, shelter.size[2] / 2 + 0.06]), [shelter.size[0] + 0.3, shelter.size[1] + 0.3, 0.12], shelter.yawDeg));
  }
}
