// TypeBox schemas of measurements (spec "Measurement", CONTRACT section 2).
import { Type } from 'typebox';
import { FreeObject, FreeValue, Id, LIMITS, Num } from '../../shared/schemas/limits.ts';

const HexColour = Type.String({ pattern: '^#([0-9a-fA-F]{3}|[0-9a-fA-F]{4}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})$', description: 'Hex colour, e.g. #ff0000' });

export const MeasurementProperties = Type.Object(
  {
    name: Type.Optional(Type.String({ maxLength: 255 })),
    description: Type.Optional(Type.String({ maxLength: 10000 })),
    color: Type.Optional(HexColour),
    color_fill: Type.Optional(HexColour),
    visible: Type.Optional(Type.Boolean()),
    camera_position: Type.Optional(Type.Array(Num(), { minItems: 3, maxItems: 3 })),
  },
  {
    additionalProperties: FreeValue,
    maxProperties: LIMITS.freeKeys,
    description: 'Known keys are checked; others are kept as given (free JSON, bounded: see the Limits of the service docs).',
  },
);

export const GeometryInput = Type.Object({
  type: Type.String({ maxLength: LIMITS.code, description: 'Point, LineString or Polygon' }),
  coordinates: Type.Unknown({ description: 'Positions of three numbers [x, y, z]; Polygon rings closed' }),
  bbox: Type.Optional(Type.Unknown({ description: 'Ignored: the service computes it' })),
});

const Tags = Type.Array(Type.String({ maxLength: 255 }), { maxItems: 100 });
const Extension = FreeObject({ description: 'Free JSON, kept as given (bounded: see the Limits of the service docs), except `computed`: the service\'s, replaced by what it computes.' });

const Metres = (description: string) => Type.Union([Type.Number(), Type.Null()], { description });
/** `extension.computed` (quantities.ts, volume.ts). */
export const MeasurementQuantities = Type.Object(
  {
    length_m: Metres('LineString: 3D length, metres; else null'),
    perimeter_m: Metres('Polygon: 3D length of the outer ring, metres; else null'),
    area_m2: Metres('Polygon: 3D area, holes subtracted, square metres; else null'),
    volume_m3: Metres('Polygon: cubic metres between the polygon\'s plane and the surface above it (the DSM\'s when it covers the polygon, else the point cloud\'s); null for other geometries, without either, or with no data over the polygon'),
    volume: Type.Union(
      [
        Type.Object({
          below_m3: Type.Number({ description: 'Cubic metres between the plane and the surface below it' }),
          base: Type.String({ description: 'polygon_plane: the plane of the polygon\'s outer ring' }),
          surface: Type.Optional(Type.String({ description: 'The surface measured: dsm (the cloud\'s DSM, heights taken vertically) or point_cloud; absent on volumes computed before it was recorded (point_cloud)' })),
          cell_size_m: Type.Number({ description: 'Side of the grid cells the surface is averaged over, metres (dsm: the DSM\'s cell, or its overview\'s for a large polygon)' }),
          points: Type.Integer({ description: 'Samples of the surface over the polygon\'s bounding box: points of the cloud, or DSM cells with data' }),
          coverage: Type.Number({ description: 'Share (0-1) of the polygon\'s cells that had points (or DSM data); the others were filled from their neighbours' }),
        }),
        Type.Null(),
      ],
      { description: 'How volume_m3 was found; null with it' },
    ),
  },
  { description: 'What the service computed from the geometry (and the point cloud), metres; recomputed whenever the geometry is written.' },
);

export const MeasurementInput = Type.Object({
  properties: Type.Optional(MeasurementProperties),
  tags: Type.Optional(Tags),
  geometry: GeometryInput,
  extension: Type.Optional(Extension),
});

export const CreateMeasurementsBody = Type.Object({ annotations: Type.Array(MeasurementInput, { minItems: 1, maxItems: 1000 }) });

/** PUT: properties, tags and geometry required. */
export const PutMeasurementBody = Type.Object({ properties: MeasurementProperties, tags: Tags, geometry: GeometryInput, extension: Type.Optional(Extension) });
/** PATCH: any subset. */
export const PatchMeasurementBody = Type.Partial(PutMeasurementBody);

export const MeasurementParams = Type.Object({
  id: Id(),
  // The measurement's id, a UUID; any other value names no measurement (404).
  annotation_id: Type.String({ pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$' }),
});

export const Measurement = Type.Object({
  id: Type.String(),
  properties: Type.Record(Type.String(), Type.Unknown()),
  tags: Type.Array(Type.String()),
  geometry: Type.Object({ type: Type.String(), coordinates: Type.Unknown(), bbox: Type.Array(Type.Number()) }),
  extension: Type.Object({ computed: MeasurementQuantities }, { additionalProperties: true, description: 'The client\'s free JSON, and `computed`: the service\'s numbers' }),
  entity_type: Type.String(),
  entity_id: Type.Integer(),
  created: Type.String({ format: 'date-time' }),
  modified: Type.String({ format: 'date-time' }),
});
