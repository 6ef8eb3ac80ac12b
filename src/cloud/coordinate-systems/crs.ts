// Output coordinate systems of the cloud service (cloud spec, "Coordinate systems"; CONTRACT §3).
//
// 1. At project creation, `coordinate_system` must be OGC WKT (WKT1 or WKT2) of a system the EPSG
//    registry knows: `parseCoordinateSystem` checks the syntax and the registration (a client
//    error, 400). A system is "EPSG-registered" when its root names a registered code of the same
//    kind (AUTHORITY["EPSG","32632"] in WKT1, ID["EPSG",32632] in WKT2); without one, when its name
//    is exactly the name of a registered system of the same kind; a compound system without a code
//    of its own is registered when each of its two components is.
// 2. When processing starts, `checkOutputCrs` applies the semantic rules, which fail processing
//    with the spec's codes, checked in this order:
//      10613 no horizontal component (e.g. a pure VERT_CS);
//      10611 not isometric: the horizontal axes are not all lengths in one unit (a geographic
//            system in degrees), or the vertical component's unit differs from the horizontal one;
//      10612 not projected or arbitrary (engineering): a geocentric system;
//      10614 a geoid model or a geoid height given without a vertical component;
//      10615 a geoid height given together with a geoid model.
//    A geoid model is given by the project's `geoid_model` field, by EXTENSION["PROJ4_GRIDS",...]
//    inside a WKT1 VERT_CS (GDAL's way of naming a geoid grid) or by GEOIDMODEL[...] inside a WKT2
//    VERTCRS. A geoid height (metres, constant, the geoid's height above the ellipsoid) is given by
//    the project's `geoid_height` field only: WKT has no standard element for it.
// 3. `resolveOutputCrs` picks the output system: the requested one (with an EGM96 height in the
//    horizontal unit as its vertical component when it has none, since vertical output is EGM96);
//    without a request, WGS 84 / UTM (zone of the images' centre) + EGM96 height when images carry
//    positions, otherwise an arbitrary (local, metre) system.
import { projectorFrom, type Projector } from '../../shared/geo/projection.ts';
import { utmZoneOfPositions } from '../../shared/geo/utm.ts';
import { epsgByCode, epsgByName, type EpsgEntry, type EpsgKind } from './epsg.ts';
import { child, children, descendants, isNode, nodeName, parseWkt, quote, WktSyntaxError, WktWord, type WktNode } from './wkt.ts';

export type CrsType = 'projected' | 'geographic' | 'geocentric' | 'engineering' | 'vertical';

export interface CrsUnit {
  name: string;
  /** Metres (length) or radians (angle) per unit. */
  factor: number;
  kind: 'length' | 'angle' | 'scale';
}

export interface CrsComponent {
  type: CrsType;
  name: string;
  /** The EPSG code of this component, when known (explicit, or found by name). */
  epsg: number | null;
  /** Exact WKT text of the component. */
  wkt: string;
  /** Units of the component's horizontal axes (all axes of a geocentric system). */
  horizontalUnits: CrsUnit[];
  /** Directions of the horizontal axes in the order the system declares them, e.g. ['east', 'north']. */
  axisDirections: string[];
  /** Unit of a vertical component. */
  verticalUnit: CrsUnit | null;
  /** Geoid model named in a vertical component's WKT (PROJ4_GRIDS extension or GEOIDMODEL). */
  geoidModel: string | null;
}

export interface ParsedCrs {
  wkt: string;
  version: 1 | 2;
  name: string;
  /** The root's own EPSG code, when it has one. */
  epsg: number | null;
  horizontal: CrsComponent | null;
  vertical: CrsComponent | null;
}

/** The string is not WKT of an EPSG-registered system: a 400 on `coordinate_system`. */
export class CrsDefinitionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CrsDefinitionError';
  }
}

export type CrsErrorCode = 10611 | 10612 | 10613 | 10614 | 10615;

export type CrsCheck = { ok: true } | { ok: false; code: CrsErrorCode; reason: string };

export interface GeoidOptions {
  geoidModel?: string | null;
  geoidHeight?: number | null;
}

// ---------------------------------------------------------------------------------------------
// Keywords

interface KeywordInfo {
  version: 1 | 2;
  type: CrsType | 'compound' | 'geodetic';
  kinds: EpsgKind[];
}

const KEYWORDS: Record<string, KeywordInfo> = {
  PROJCS: { version: 1, type: 'projected', kinds: ['CRS-PROJCRS'] },
  GEOGCS: { version: 1, type: 'geographic', kinds: ['CRS-GEOGCRS', 'CRS-GEOG3DCRS'] },
  GEOCCS: { version: 1, type: 'geocentric', kinds: ['CRS-GCENCRS'] },
  VERT_CS: { version: 1, type: 'vertical', kinds: ['CRS-VERTCRS'] },
  LOCAL_CS: { version: 1, type: 'engineering', kinds: ['CRS-ENGCRS'] },
  COMPD_CS: { version: 1, type: 'compound', kinds: ['CRS-COMPOUNDCRS'] },
  PROJCRS: { version: 2, type: 'projected', kinds: ['CRS-PROJCRS'] },
  PROJECTEDCRS: { version: 2, type: 'projected', kinds: ['CRS-PROJCRS'] },
  GEOGCRS: { version: 2, type: 'geographic', kinds: ['CRS-GEOGCRS', 'CRS-GEOG3DCRS'] },
  GEOGRAPHICCRS: { version: 2, type: 'geographic', kinds: ['CRS-GEOGCRS', 'CRS-GEOG3DCRS'] },
  GEODCRS: { version: 2, type: 'geodetic', kinds: ['CRS-GCENCRS', 'CRS-GEOGCRS', 'CRS-GEOG3DCRS'] },
  GEODETICCRS: { version: 2, type: 'geodetic', kinds: ['CRS-GCENCRS', 'CRS-GEOGCRS', 'CRS-GEOG3DCRS'] },
  VERTCRS: { version: 2, type: 'vertical', kinds: ['CRS-VERTCRS'] },
  VERTICALCRS: { version: 2, type: 'vertical', kinds: ['CRS-VERTCRS'] },
  ENGCRS: { version: 2, type: 'engineering', kinds: ['CRS-ENGCRS'] },
  ENGINEERINGCRS: { version: 2, type: 'engineering', kinds: ['CRS-ENGCRS'] },
  COMPOUNDCRS: { version: 2, type: 'compound', kinds: ['CRS-COMPOUNDCRS'] },
};

/** What each keyword must contain (one of each group), so that the text is a complete definition. */
const REQUIRED: Record<string, string[][]> = {
  PROJCS: [['GEOGCS'], ['PROJECTION'], ['UNIT']],
  GEOGCS: [['DATUM'], ['PRIMEM'], ['UNIT']],
  GEOCCS: [['DATUM'], ['PRIMEM'], ['UNIT']],
  VERT_CS: [['VERT_DATUM'], ['UNIT']],
  LOCAL_CS: [['LOCAL_DATUM'], ['UNIT']],
  PROJCRS: [['BASEGEOGCRS', 'BASEGEODCRS'], ['CONVERSION'], ['CS'], ['AXIS']],
  GEOGCRS: [['DATUM', 'GEODETICDATUM', 'TRF', 'ENSEMBLE'], ['CS'], ['AXIS']],
  GEODCRS: [['DATUM', 'GEODETICDATUM', 'TRF', 'ENSEMBLE'], ['CS'], ['AXIS']],
  VERTCRS: [['VDATUM', 'VERTICALDATUM', 'VRF', 'ENSEMBLE'], ['CS'], ['AXIS']],
  ENGCRS: [['EDATUM', 'ENGINEERINGDATUM'], ['CS'], ['AXIS']],
};
REQUIRED.PROJECTEDCRS = REQUIRED.PROJCRS;
REQUIRED.GEOGRAPHICCRS = REQUIRED.GEOGCRS;
REQUIRED.GEODETICCRS = REQUIRED.GEODCRS;
REQUIRED.VERTICALCRS = REQUIRED.VERTCRS;
REQUIRED.ENGINEERINGCRS = REQUIRED.ENGCRS;

const WKT2_UNITS = ['LENGTHUNIT', 'ANGLEUNIT', 'SCALEUNIT', 'UNIT'];

// ---------------------------------------------------------------------------------------------
// Parsing (client errors)

/** Parses and checks `coordinate_system`; throws CrsDefinitionError with a message for the client. */
export function parseCoordinateSystem(text: string): ParsedCrs {
  if (text.trim() === '') throw new CrsDefinitionError('Give the OGC WKT of an EPSG-registered coordinate system.');
  let root: WktNode;
  try {
    root = parseWkt(text);
  } catch (err) {
    if (err instanceof WktSyntaxError) throw new CrsDefinitionError(`Not valid WKT: ${err.message}.`);
    throw err;
  }
  const info = KEYWORDS[root.keyword];
  if (!info) {
    throw new CrsDefinitionError(
      `Not the WKT of a coordinate system: ${root.keyword} is not one of ${Object.keys(KEYWORDS).join(', ')}.`,
    );
  }
  checkVersionConsistency(root, info.version);
  const name = requireName(root);
  let horizontal: CrsComponent | null = null;
  let vertical: CrsComponent | null = null;
  const ownCode = authorityCode(root);
  if (info.type === 'compound') {
    const parts = root.args.filter((a): a is WktNode => isNode(a) && KEYWORDS[a.keyword] !== undefined);
    if (parts.length !== 2 || root.args.filter(isNode).some((a) => KEYWORDS[a.keyword]?.type === 'compound')) {
      throw new CrsDefinitionError(`${root.keyword} must hold exactly two coordinate systems (horizontal and vertical).`);
    }
    const components = parts.map((part) => readComponent(part, ownCode === null));
    for (const component of components) {
      if (component.type === 'vertical') {
        if (vertical) throw new CrsDefinitionError(`${root.keyword} holds two vertical systems.`);
        vertical = component;
      } else {
        if (horizontal) throw new CrsDefinitionError(`${root.keyword} holds two horizontal systems.`);
        horizontal = component;
      }
    }
  } else {
    const component = readComponent(root, false);
    if (component.type === 'vertical') vertical = component;
    else horizontal = component;
  }
  const epsg = ownCode === null ? (info.type === 'compound' ? null : (horizontal ?? vertical)!.epsg) : registered(root, ownCode, info).code;
  if (ownCode === null && info.type !== 'compound' && epsg === null) {
    throw new CrsDefinitionError(
      `"${name}" names no EPSG-registered coordinate system: add its code (AUTHORITY["EPSG","<code>"] in WKT1, ID["EPSG",<code>] in WKT2) or use its registered name.`,
    );
  }
  return { wkt: text.trim(), version: info.version, name, epsg: epsg === null ? null : Number(epsg), horizontal, vertical };
}

function checkVersionConsistency(root: WktNode, version: 1 | 2): void {
  const other = descendants(root, ...Object.keys(KEYWORDS)).find((n) => KEYWORDS[n.keyword].version !== version);
  if (other) throw new CrsDefinitionError(`WKT1 and WKT2 keywords are mixed (${root.keyword} with ${other.keyword}).`);
}

function requireName(node: WktNode): string {
  const name = nodeName(node);
  if (name === undefined || name.trim() === '') throw new CrsDefinitionError(`${node.keyword} must begin with its quoted name.`);
  return name;
}

/** The EPSG code a node declares itself (its own AUTHORITY or ID, not a nested one). */
function authorityCode(node: WktNode): string | null {
  for (const id of children(node, 'AUTHORITY', 'ID')) {
    if (typeof id.args[0] === 'string' && id.args[0].toUpperCase() === 'EPSG') {
      const code = id.args[1];
      if (typeof code === 'number' || typeof code === 'string') return String(code).trim();
    }
  }
  return null;
}

function registered(node: WktNode, code: string, info: KeywordInfo): EpsgEntry {
  const entry = epsgByCode(code);
  if (!entry) throw new CrsDefinitionError(`EPSG:${code} is not an EPSG-registered coordinate system.`);
  if (!info.kinds.includes(entry.kind)) {
    throw new CrsDefinitionError(
      `${node.keyword} "${nodeName(node)}" declares EPSG:${code}, which is registered as "${entry.name}", a ${describeKind(entry.kind)}.`,
    );
  }
  return entry;
}

function describeKind(kind: EpsgKind): string {
  return (
    {
      'CRS-PROJCRS': 'projected system',
      'CRS-GEOGCRS': 'geographic system',
      'CRS-GEOG3DCRS': 'geographic 3D system',
      'CRS-GCENCRS': 'geocentric system',
      'CRS-VERTCRS': 'vertical system',
      'CRS-COMPOUNDCRS': 'compound system',
      'CRS-ENGCRS': 'engineering system',
      'CRS-DRVDCRS': 'derived system',
    } as const
  )[kind];
}

/** Reads one (non-compound) system; `mustBeRegistered`: its own registration is required. */
function readComponent(node: WktNode, mustBeRegistered: boolean): CrsComponent {
  const info = KEYWORDS[node.keyword];
  if (info.type === 'compound') throw new CrsDefinitionError(`${node.keyword} cannot be nested.`);
  const name = requireName(node);
  for (const group of REQUIRED[node.keyword] ?? []) {
    if (!child(node, ...group)) throw new CrsDefinitionError(`${node.keyword} "${name}" lacks ${group.join(' or ')}.`);
  }
  const explicit = authorityCode(node);
  let epsg: number | null = null;
  if (explicit !== null) {
    epsg = Number(registered(node, explicit, info).code);
  } else {
    const match = epsgByName(name).find((entry) => info.kinds.includes(entry.kind));
    if (match) epsg = Number(match.code);
    else if (mustBeRegistered) {
      throw new CrsDefinitionError(
        `"${name}" names no EPSG-registered coordinate system: add its code (AUTHORITY["EPSG","<code>"] in WKT1, ID["EPSG",<code>] in WKT2) or use its registered name.`,
      );
    }
  }
  const type: CrsType = info.type === 'geodetic' ? geodeticType(node) : (info.type as CrsType);
  const axes = readAxes(node, info.version, type);
  const horizontalAxes = type === 'geocentric' ? axes : axes.filter((a) => a.direction !== 'up' && a.direction !== 'down');
  const verticalAxes = axes.filter((a) => a.direction === 'up' || a.direction === 'down');
  return {
    type,
    name,
    epsg,
    wkt: node.text,
    horizontalUnits: type === 'vertical' ? [] : horizontalAxes.map((a) => a.unit),
    axisDirections: type === 'vertical' ? [] : horizontalAxes.map((a) => a.direction),
    verticalUnit: type === 'vertical' ? (verticalAxes[0]?.unit ?? axes[0]?.unit ?? null) : null,
    geoidModel: type === 'vertical' ? geoidModelOf(node) : null,
  };
}

function geodeticType(node: WktNode): CrsType {
  const cs = child(node, 'CS');
  const kind = cs?.args[0];
  return kind instanceof WktWord && kind.word.toLowerCase() === 'cartesian' ? 'geocentric' : 'geographic';
}

interface Axis {
  direction: string;
  unit: CrsUnit;
}

function readAxes(node: WktNode, version: 1 | 2, type: CrsType): Axis[] {
  const defaultKind: CrsUnit['kind'] = type === 'geographic' ? 'angle' : 'length';
  if (version === 1) {
    const unitNode = child(node, 'UNIT');
    if (!unitNode) throw new CrsDefinitionError(`${node.keyword} "${nodeName(node)}" lacks UNIT.`);
    const unit = readUnit(unitNode, defaultKind);
    const declared = children(node, 'AXIS').map((axis) => ({ direction: axisDirection(axis), unit }));
    if (declared.length > 0) return declared;
    // WKT1 defaults (OGC 01-009): east/north for projected, lon/lat for geographic, X/Y/Z geocentric.
    if (type === 'vertical') return [{ direction: 'up', unit }];
    if (type === 'geocentric') return ['other', 'other', 'north'].map((direction) => ({ direction, unit }));
    return [
      { direction: 'east', unit },
      { direction: 'north', unit },
    ];
  }
  const csUnitNode = child(node, ...WKT2_UNITS);
  const csUnit = csUnitNode ? readUnit(csUnitNode, defaultKind) : null;
  const axes = children(node, 'AXIS');
  if (axes.length === 0) throw new CrsDefinitionError(`${node.keyword} "${nodeName(node)}" has no AXIS.`);
  return axes.map((axis) => {
    const own = child(axis, ...WKT2_UNITS);
    const unit = own ? readUnit(own, defaultKind) : csUnit;
    if (!unit) throw new CrsDefinitionError(`AXIS "${nodeName(axis)}" of "${nodeName(node)}" has no unit.`);
    return { direction: axisDirection(axis), unit };
  });
}

function axisDirection(axis: WktNode): string {
  const direction = axis.args[1];
  if (direction instanceof WktWord || typeof direction === 'string') return String(direction).toLowerCase();
  throw new CrsDefinitionError(`AXIS "${nodeName(axis)}" lacks its direction.`);
}

function readUnit(node: WktNode, defaultKind: CrsUnit['kind']): CrsUnit {
  const name = nodeName(node);
  const factor = node.args[1];
  if (name === undefined || typeof factor !== 'number' || !(factor > 0)) {
    throw new CrsDefinitionError(`${node.keyword} must give a name and a positive conversion factor.`);
  }
  const kind = node.keyword === 'LENGTHUNIT' ? 'length' : node.keyword === 'ANGLEUNIT' ? 'angle' : node.keyword === 'SCALEUNIT' ? 'scale' : defaultKind;
  return { name, factor, kind };
}

function geoidModelOf(vertical: WktNode): string | null {
  for (const extension of descendants(vertical, 'EXTENSION')) {
    if (typeof extension.args[0] === 'string' && extension.args[0].toUpperCase() === 'PROJ4_GRIDS' && typeof extension.args[1] === 'string') {
      return extension.args[1];
    }
  }
  const model = descendants(vertical, 'GEOIDMODEL')[0];
  return model ? (nodeName(model) ?? null) : null;
}

// ---------------------------------------------------------------------------------------------
// Semantic checks (processing errors 10611-10615)

export function checkOutputCrs(crs: ParsedCrs, options: GeoidOptions = {}): CrsCheck {
  const h = crs.horizontal;
  if (!h) {
    return { ok: false, code: 10613, reason: `Output CRS "${crs.name}" has no horizontal component. Use a CRS with a horizontal component.` };
  }
  const units = h.horizontalUnits;
  const first = units[0];
  if (!first || units.some((u) => u.kind !== 'length')) {
    return {
      ok: false,
      code: 10611,
      reason: `Output CRS "${crs.name}" is not isometric: its horizontal axes are not lengths (${unitList(units)}). Use a valid isometric CRS.`,
    };
  }
  if (units.some((u) => !sameFactor(u.factor, first.factor))) {
    return { ok: false, code: 10611, reason: `Output CRS "${crs.name}" is not isometric: its axes have different units (${unitList(units)}). Use a valid isometric CRS.` };
  }
  const v = crs.vertical?.verticalUnit;
  if (v && (v.kind !== 'length' || !sameFactor(v.factor, first.factor))) {
    return {
      ok: false,
      code: 10611,
      reason: `Output CRS "${crs.name}" is not isometric: horizontal unit ${first.name}, vertical unit ${v.name}. Use a valid isometric CRS.`,
    };
  }
  if (h.type !== 'projected' && h.type !== 'engineering') {
    return { ok: false, code: 10612, reason: `Output CRS "${crs.name}" is ${h.type}, not projected or arbitrary. Use a projected or arbitrary CRS.` };
  }
  const geoidModel = options.geoidModel ?? crs.vertical?.geoidModel ?? null;
  const geoidHeight = options.geoidHeight ?? null;
  if (!crs.vertical && (geoidModel !== null || geoidHeight !== null)) {
    return {
      ok: false,
      code: 10614,
      reason: `A ${geoidModel !== null ? 'geoid model' : 'geoid height'} is given but output CRS "${crs.name}" has no vertical component. Remove it or add a vertical component.`,
    };
  }
  if (geoidModel !== null && geoidHeight !== null) {
    return { ok: false, code: 10615, reason: `A geoid height (${geoidHeight} m) is given together with a geoid model (${geoidModel}). Remove one of them.` };
  }
  return { ok: true };
}

function sameFactor(a: number, b: number): boolean {
  return Math.abs(a - b) <= 1e-12 * Math.max(Math.abs(a), Math.abs(b));
}

function unitList(units: CrsUnit[]): string {
  return units.map((u) => u.name).join(', ') || 'none';
}

// ---------------------------------------------------------------------------------------------
// Output system

export interface OutputCoordinateSystem {
  /** The WKT in use (the requested one, completed with a vertical component when it had none). */
  wkt: string;
  name: string;
  /** requested: from `coordinate_system`; default: WGS 84 / UTM from the images; arbitrary: no georeference. */
  source: 'requested' | 'default' | 'arbitrary';
  type: 'projected' | 'arbitrary';
  horizontal_epsg: number | null;
  vertical_epsg: number | null;
  vertical_name: string | null;
  /** Unit of x, y and z. */
  unit: string;
  /** Metres per unit. */
  unit_factor: number;
  /** Directions of x and y, e.g. ["east", "north"]. */
  axis_order: string[];
  geoid_model: string | null;
  geoid_height: number | null;
  /** PROJ definition of the horizontal component (empty for an arbitrary system). */
  proj4: string;
  /** WKT of the horizontal component alone. */
  horizontal_wkt: string;
}

export type OutputCrsResult = { ok: true; crs: OutputCoordinateSystem } | { ok: false; code: CrsErrorCode; reason: string };

export const ARBITRARY_WKT =
  'LOCAL_CS["Arbitrary (metre)",LOCAL_DATUM["Arbitrary",0],UNIT["metre",1,AUTHORITY["EPSG","9001"]],AXIS["X",EAST],AXIS["Y",NORTH],AXIS["Z",UP]]';

export function resolveOutputCrs(input: {
  requested: string | null;
  geoidModel?: string | null;
  geoidHeight?: number | null;
  /** WGS 84 positions of the images (those that carry one). */
  positions: { latitude: number; longitude: number }[];
}): OutputCrsResult {
  if (input.requested) {
    const parsed = parseCoordinateSystem(input.requested);
    const check = checkOutputCrs(parsed, input);
    if (!check.ok) return check;
    return { ok: true, crs: describe(withEgm96(parsed), 'requested', input) };
  }
  if (input.positions.length > 0) {
    const zone = utmZoneOfPositions(input.positions);
    const utm = epsgByCode(zone.epsg)!;
    const parsed = parseCoordinateSystem(utm.wkt!);
    return { ok: true, crs: describe(withEgm96(parsed), 'default', input) };
  }
  return {
    ok: true,
    crs: {
      wkt: ARBITRARY_WKT,
      name: 'Arbitrary (metre)',
      source: 'arbitrary',
      type: 'arbitrary',
      horizontal_epsg: null,
      vertical_epsg: null,
      vertical_name: null,
      unit: 'metre',
      unit_factor: 1,
      axis_order: ['east', 'north'],
      geoid_model: null,
      geoid_height: null,
      proj4: '',
      horizontal_wkt: ARBITRARY_WKT,
    },
  };
}

/** Adds EGM96 height (in the horizontal unit) as the vertical component of a projected system without one. */
function withEgm96(crs: ParsedCrs): ParsedCrs {
  const h = crs.horizontal!;
  if (crs.vertical || h.type !== 'projected') return crs;
  const unit = h.horizontalUnits[0];
  const metre = sameFactor(unit.factor, 1);
  const verticalName = metre ? 'EGM96 height' : `EGM96 height (${unit.name})`;
  let verticalWkt: string;
  let compound: string;
  const name = `${h.name} + ${verticalName}`;
  if (crs.version === 1) {
    verticalWkt = metre
      ? epsgByCode(5773)!.wkt!
      : `VERT_CS[${quote(verticalName)},VERT_DATUM["EGM96 geoid",2005,AUTHORITY["EPSG","5171"]],UNIT[${quote(unit.name)},${unit.factor}],AXIS["Gravity-related height",UP]]`;
    compound = `COMPD_CS[${quote(name)},${h.wkt},${verticalWkt}]`;
  } else {
    verticalWkt = `VERTCRS[${quote(verticalName)},VDATUM["EGM96 geoid",ID["EPSG",5171]],CS[vertical,1],AXIS["gravity-related height (H)",up,LENGTHUNIT[${quote(unit.name)},${unit.factor}]]${metre ? ',ID["EPSG",5773]' : ''}]`;
    compound = `COMPOUNDCRS[${quote(name)},${h.wkt},${verticalWkt}]`;
  }
  const vertical: CrsComponent = {
    type: 'vertical',
    name: verticalName,
    epsg: metre ? 5773 : null,
    wkt: verticalWkt,
    horizontalUnits: [],
    axisDirections: [],
    verticalUnit: { ...unit },
    geoidModel: null,
  };
  return { ...crs, wkt: compound, name, epsg: null, vertical };
}

function describe(crs: ParsedCrs, source: 'requested' | 'default', options: GeoidOptions): OutputCoordinateSystem {
  const h = crs.horizontal!;
  const unit = h.horizontalUnits[0];
  const entry = h.epsg !== null ? epsgByCode(h.epsg) : undefined;
  return {
    wkt: crs.wkt,
    name: crs.name,
    source,
    type: h.type === 'engineering' ? 'arbitrary' : 'projected',
    horizontal_epsg: h.epsg,
    vertical_epsg: crs.vertical?.epsg ?? null,
    vertical_name: crs.vertical?.name ?? null,
    unit: unit.name,
    unit_factor: unit.factor,
    axis_order: h.axisDirections.slice(0, 2),
    geoid_model: options.geoidModel ?? crs.vertical?.geoidModel ?? null,
    geoid_height: options.geoidHeight ?? null,
    proj4: h.type === 'engineering' ? '' : (entry?.proj4 ?? ''),
    horizontal_wkt: h.wkt,
  };
}

// ---------------------------------------------------------------------------------------------
// Projection

export type { Projector } from '../../shared/geo/projection.ts';

/**
 * Projects WGS 84 positions into the output system's horizontal axes (x, y in the system's axis
 * order and unit). null for an arbitrary system, or when proj4 cannot use the definition.
 */
export function projectorFor(crs: OutputCoordinateSystem): Projector | null {
  return projectorFrom({ type: crs.type, proj4: crs.proj4, horizontal_wkt: crs.horizontal_wkt, axis_order: crs.axis_order });
}

/** What outputs (calibrated cameras, quality report) say of their coordinate system; enough for `projectorFrom`. */
export function describeCrs(crs: OutputCoordinateSystem) {
  return {
    name: crs.name,
    wkt: crs.wkt,
    type: crs.type,
    horizontal_epsg: crs.horizontal_epsg,
    vertical_epsg: crs.vertical_epsg,
    axis_order: crs.axis_order,
    unit: crs.unit,
    unit_factor: crs.unit_factor,
    proj4: crs.proj4,
    horizontal_wkt: crs.horizontal_wkt,
  };
}
