// Bodies of the inventory routes (inventory.routes.ts) and the `computation` of an item: every
// input bounded (docs/inspection-service.md, "Limits").
import { Type } from 'typebox';
import { FreeObject, FreeValue, Id, LIMITS, Num } from '../../shared/schemas/limits.ts';
import { Nullable } from '../http/nullable.ts';
import { MODEL_TYPES } from './inventory.service.ts';

/** At most this many photos mark one item. */
export const MAX_MARKED_PHOTOS = 20;

const Fraction = Num({ minimum: 0, maximum: 1 });
const Corner = Type.Array(Fraction, { minItems: 2, maxItems: 2 });

export const Coords2d = Type.Unsafe<Record<string, [number, number][]>>({
  type: 'object',
  description:
    "The item's front face marked on photos: keys are photo_ids of the inspection's cameras, values the face's four corners [x, y] in 0..1 of the photo's width and height, in the order top-left, top-right, bottom-right, bottom-left as the photo shows them. Two or more photos: the service computes coords_3d, azimuth, downtilt, plumb, width and height from them (see `computation`); `{}`: no geometry.",
  maxProperties: MAX_MARKED_PHOTOS,
  propertyNames: { pattern: '^[1-9][0-9]{0,9}$' },
  additionalProperties: Type.Array(Corner, { minItems: 4, maxItems: 4 }),
});

// The ranges the computed values take (inventory-geometry.ts), so that one entered by hand means
// what a computed one does: an azimuth is a bearing, 0 <= a < 360; a downtilt an angle below the
// horizontal, -90 (facing straight up) to 90; a plumb an unsigned lean from the vertical, 0 to 90.
const Angle = (range: { minimum: number; maximum?: number; exclusiveMaximum?: number }, description: string) => Nullable(Num({ ...range, description }));
const Metres = (description: string) => Nullable(Num({ minimum: -10_000, maximum: 10_000, description }));

const Fields = {
  name: Type.String({ maxLength: LIMITS.name }),
  model_name: Type.String({ maxLength: LIMITS.name }),
  weight: Type.String({ maxLength: LIMITS.name }),
  urls: FreeObject(),
  device_status: Type.String({ maxLength: LIMITS.name }),
  model_type: Type.Union(
    MODEL_TYPES.map((t) => Type.Literal(t)),
    { description: MODEL_TYPES.join(', ') },
  ),
  coords_2d: Coords2d,
  public: Type.Boolean(),
  visible: Type.Boolean(),
  custom_fields: Type.Array(FreeValue, { maxItems: LIMITS.freeKeys }),
  template: Nullable(Id()),
  depth: Nullable(Num({ minimum: 0, maximum: 10_000, description: 'metres, entered by hand' })),
  // Entered by hand only for an item without marks: with marks on two or more photos the service
  // computes them and refuses them in the body (400).
  azimuth: Angle({ minimum: 0, exclusiveMaximum: 360 }, 'degrees clockwise from true north, 0 <= azimuth < 360; only without coords_2d (else computed)'),
  downtilt: Angle({ minimum: -90, maximum: 90 }, 'degrees below the horizontal, -90..90 (negative: facing upwards); only without coords_2d (else computed)'),
  plumb: Angle({ minimum: 0, maximum: 90 }, 'degrees from the vertical, 0..90; only without coords_2d (else computed)'),
  height: Metres('metres above the asset base; only without coords_2d (else computed)'),
  width: Nullable(Num({ minimum: 0, maximum: 10_000, description: 'metres; only without coords_2d (else computed)' })),
};

export const CreateInventoryItemBody = Type.Object(
  {
    model_type: Fields.model_type,
    name: Type.Optional(Fields.name),
    model_name: Type.Optional(Fields.model_name),
    weight: Type.Optional(Fields.weight),
    urls: Type.Optional(Fields.urls),
    device_status: Type.Optional(Fields.device_status),
    coords_2d: Type.Optional(Fields.coords_2d),
    public: Type.Optional(Fields.public),
    visible: Type.Optional(Fields.visible),
    custom_fields: Type.Optional(Fields.custom_fields),
    template: Type.Optional(Fields.template),
    depth: Type.Optional(Fields.depth),
    azimuth: Type.Optional(Fields.azimuth),
    downtilt: Type.Optional(Fields.downtilt),
    plumb: Type.Optional(Fields.plumb),
    height: Type.Optional(Fields.height),
    width: Type.Optional(Fields.width),
  },
  { additionalProperties: false },
);

export const PatchInventoryItemBody = Type.Partial(CreateInventoryItemBody, { additionalProperties: false });

export const InventoryItemParams = Type.Object({ id: Id(), item_id: Id() });

export const Computation = Nullable(
  Type.Object(
    {
      method: Type.String({ description: "'triangulation' (from the marks on two or more photos), 'entered' (values given by hand, or none) or 'detection' (the automatic antenna detection, `detect_antennas`)" }),
      photos: Type.Integer({ description: 'photos the item is marked on' }),
      residual_m: Nullable(Type.Number({ description: "RMS distance of the triangulated corners from their photos' rays, metres" })),
      planarity_m: Nullable(Type.Number({ description: 'RMS distance of the corners from the front plane, metres' })),
      ray_angle_deg: Nullable(Type.Number({ description: "widest angle between two photos' rays through the face's centre" })),
      corners_3d: Type.Array(Type.Object({ x: Type.Number(), y: Type.Number(), z: Type.Number() }), { description: 'top-left, top-right, bottom-right, bottom-left, output coordinate system' }),
      normal: Nullable(Type.Array(Type.Number(), { description: "unit facing direction (x east, y north, z up)" })),
      vertical_size_m: Nullable(Type.Number({ description: "mean length of the face's side edges" })),
      height_reference: Nullable(Type.String({ description: "'base_plate_location', 'ground_reference_altitude' or (detection) 'detected_tower_base': what `height` is measured above; null: none is known, no height" })),
      height_reference_z: Nullable(Type.Number()),
      north_convergence_deg: Type.Optional(Nullable(Type.Number({ description: 'grid bearing of true north at the asset (degrees): azimuth = grid azimuth − this; null: grid north used' }))),
      azimuth_reference: Type.String({ description: 'the north the azimuth is measured from: true north (with the meridian convergence applied) or grid north (and why)' }),
      confidence: Type.Optional(Type.Number({ description: 'detection: how well the box fits and how much of it the cloud holds, 0..1' })),
      points: Type.Optional(Type.Integer({ description: 'detection: points of the cloud in the item' })),
      box_corners_3d: Type.Optional(Type.Array(Type.Object({ x: Type.Number(), y: Type.Number(), z: Type.Number() }), { description: "detection: the fitted box's eight corners, output coordinate system (corners_3d: its front face's four); corner i lies on the box's right side when bit 0 of i is set, its top when bit 1 is, its front when bit 2 is, so corners whose indices differ in one bit share an edge" })),
    },
    { description: 'How coords_3d, azimuth, downtilt, plumb, width and height were found (an extension of the spec; null for items from before it).' },
  ),
);
