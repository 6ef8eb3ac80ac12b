// Detected inventory items' boxes in the 3D view: each box's twelve edges (lib/inventory-shapes.ts
// boxEdges) as line segments in scene coordinates, the selected item's drawn in the selection
// colour and over the model (no depth test), so it is seen even inside the cloud.
import * as THREE from 'three';
import type { Vec3 } from '../../lib/inventory-shapes';
import { asIs } from './scene';

export function itemBoxes(boxes: { edges: [Vec3, Vec3][]; selected: boolean }[], local: (p: Vec3) => THREE.Vector3): THREE.Group {
  const group = new THREE.Group();
  const plain = new THREE.LineBasicMaterial({ color: asIs(0x7cffb2) });
  const selected = new THREE.LineBasicMaterial({ color: asIs(0x3ad1ff), depthTest: false });
  for (const box of boxes) {
    const points = box.edges.flatMap(([a, b]) => [local(a), local(b)]);
    const lines = new THREE.LineSegments(new THREE.BufferGeometry().setFromPoints(points), box.selected ? selected : plain);
    if (box.selected) lines.renderOrder = 1;
    group.add(lines);
  }
  return group;
}
