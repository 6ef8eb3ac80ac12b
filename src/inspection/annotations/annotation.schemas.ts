// TypeBox schemas of annotations (spec "Annotation (photo annotation)").
import { Type } from 'typebox';
import { Nullable } from '../http/nullable.ts';
import { Id, Int, LIMITS, Num } from '../../shared/schemas/limits.ts';

const NullableString = Nullable(Type.String());
export const Point3Schema = Type.Union([Type.Object({ x: Type.Number(), y: Type.Number(), z: Type.Number() }), Type.Null()]);
const Point3Input = Type.Union([Type.Object({ x: Num(), y: Num(), z: Num() }), Type.Null()]);

export const Coords2d = Type.Array(Type.Array(Num({ minimum: 0, maximum: 1 }), { minItems: 2, maxItems: 2 }), {
  minItems: 4,
  maxItems: 4,
  description:
    'Four [x, y] points, fractions of the photo: (0, 0) is its upper left, (1, 1) its bottom right. They are the four corners of an axis-aligned rectangle, in any order.',
});

export const Link = Type.Object({
  link: Type.String({ minLength: 1, maxLength: LIMITS.url, description: 'An http(s) URL' }),
  description: Type.Optional(Type.String({ maxLength: 1000, default: '' })),
});

export const AnnotationData = Type.Object(
  { coords_2d: Coords2d, links: Type.Optional(Type.Array(Link, { maxItems: 100 })) },
  { additionalProperties: false },
);

const common = {
  type: Type.String({ minLength: 1, maxLength: 255 }),
  inspection: Id(),
  name: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 255 }))),
  data: AnnotationData,
  severity_level: Type.Optional(Int({ minimum: 0, maximum: 5, description: 'Default 0' })),
  description: Type.Optional(Nullable(Type.String({ maxLength: LIMITS.text }))),
  coords_3d: Type.Optional(Point3Input),
  public: Type.Optional(Type.Boolean()),
  is_visible: Type.Optional(Type.Boolean()),
};

export const CreateAnnotationBody = Type.Object({
  ...common,
  photo_id: Int({ minimum: 0, description: 'photo_id of a camera of the inspection' }),
});

/** PUT: `type`, `inspection` and `data` required, every field overwritten (missing ones reset). */
export const PutAnnotationBody = Type.Object(common);
/** PATCH: any subset. */
export const PatchAnnotationBody = Type.Partial(Type.Object(common));

export const CreateAnnotationQuery = Type.Object({
  coords_3d: Type.Optional(Type.Boolean({ description: 'Compute coords_3d from the point cloud (see the operation description)' })),
});

export const Annotation = Type.Object({
  id: Type.Integer(),
  type: Type.String(),
  inspection: Type.Integer(),
  name: NullableString,
  number: Type.Integer(),
  data: Type.Object({
    coords_2d: Type.Array(Type.Array(Type.Number())),
    links: Type.Array(Type.Object({ link: Type.String(), description: Type.String() })),
  }),
  severity_level: Type.Integer(),
  description: NullableString,
  user: Type.Integer(),
  photo_id: Type.Integer(),
  coords_3d: Point3Schema,
  public: Type.Boolean(),
  is_visible: Type.Boolean(),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
});

export const AnnotationType = Type.Object({ type: Type.String() });
