export {
  ARBITRARY_WKT,
  checkOutputCrs,
  CrsDefinitionError,
  parseCoordinateSystem,
  projectorFor,
  resolveOutputCrs,
  type CrsCheck,
  type CrsErrorCode,
  type OutputCoordinateSystem,
  type ParsedCrs,
  type Projector,
} from './crs.ts';
export { epsgByCode, epsgByName, type EpsgEntry } from './epsg.ts';
