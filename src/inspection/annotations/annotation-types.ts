// Default annotation types, offered with the user's own types by GET /v1/annotations/types/.
export const DEFAULT_ANNOTATION_TYPES = [
  'Corrosion',
  'Crack',
  'Damage',
  'Deformation',
  'Loose bolt',
  'Missing part',
  'Paint defect',
  'Vegetation',
  'Other',
] as const;
