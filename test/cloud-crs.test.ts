// Unit tests of the cloud service's coordinate-system module (src/cloud/coordinate-systems) and of
// UTM zones (src/shared/geo/utm.ts): WKT syntax, EPSG registration (400 at creation), the semantic
// rules 10611-10615 and the default output systems (cloud spec, "Coordinate systems" 1-4).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseWkt, WktSyntaxError } from '../src/cloud/coordinate-systems/wkt.ts';
import {
  ARBITRARY_WKT,
  checkOutputCrs,
  CrsDefinitionError,
  epsgByCode,
  parseCoordinateSystem,
  projectorFor,
  resolveOutputCrs,
} from '../src/cloud/coordinate-systems/index.ts';
import { utmZone, utmZoneOfPositions } from '../src/shared/geo/utm.ts';

const wkt = (code: number) => epsgByCode(code)!.wkt!;
const UTM32N_WKT2 =
  'PROJCRS["WGS 84 / UTM zone 32N",BASEGEOGCRS["WGS 84",DATUM["World Geodetic System 1984",ELLIPSOID["WGS 84",6378137,298.257223563,LENGTHUNIT["metre",1]]],' +
  'PRIMEM["Greenwich",0,ANGLEUNIT["degree",0.0174532925199433]]],CONVERSION["UTM zone 32N",METHOD["Transverse Mercator",ID["EPSG",9807]],' +
  'PARAMETER["Latitude of natural origin",0,ANGLEUNIT["degree",0.0174532925199433]],PARAMETER["Longitude of natural origin",9,ANGLEUNIT["degree",0.0174532925199433]],' +
  'PARAMETER["Scale factor at natural origin",0.9996,SCALEUNIT["unity",1]],PARAMETER["False easting",500000,LENGTHUNIT["metre",1]],' +
  'PARAMETER["False northing",0,LENGTHUNIT["metre",1]]],CS[Cartesian,2],AXIS["easting",east,ORDER[1],LENGTHUNIT["metre",1]],' +
  'AXIS["northing",north,ORDER[2],LENGTHUNIT["metre",1]],ID["EPSG",32632]]';
/** WGS 84 / UTM 32N + EGM96 height, its vertical datum naming a geoid grid as GDAL writes it. */
const UTM_EGM96_GRID = `COMPD_CS["UTM 32N + EGM96",${wkt(32632)},${wkt(5773).replace(
  'VERT_DATUM["EGM96 geoid",2005,AUTHORITY["EPSG","5171"]]',
  'VERT_DATUM["EGM96 geoid",2005,EXTENSION["PROJ4_GRIDS","egm96_15.gtx"],AUTHORITY["EPSG","5171"]]',
)}]`;
const UTM_EGM96 = `COMPD_CS["UTM 32N + EGM96",${wkt(32632)},${wkt(5773)}]`;

function rejects(text: string, pattern: RegExp): void {
  assert.throws(() => parseCoordinateSystem(text), (err: unknown) => err instanceof CrsDefinitionError && pattern.test(err.message));
}

describe('WKT reader', () => {
  it('reads nodes, quoted strings with "" escapes, numbers, bare words and both bracket styles', () => {
    const node = parseWkt('UNIT("metre",1.5E0,AUTHORITY["EPSG","9001"])');
    assert.equal(node.keyword, 'UNIT');
    assert.equal(node.args[0], 'metre');
    assert.equal(node.args[1], 1.5);
    assert.equal(parseWkt('X["a ""quoted"" name",EAST]').args[0], 'a "quoted" name');
    assert.equal(String(parseWkt('AXIS["Easting",EAST]').args[1]), 'EAST');
  });

  it('rejects unbalanced, truncated, trailing and empty text', () => {
    for (const bad of ['PROJCS["x"', 'PROJCS["x"]]', 'PROJCS["x"] extra', 'PROJCS[]', '["x"]', 'PROJCS["x",', 'PROJCS["unterminated]', '{"wkt": 1}']) {
      assert.throws(() => parseWkt(bad), WktSyntaxError, bad);
    }
  });
});

describe('coordinate_system at creation: WKT of an EPSG-registered system (400 otherwise)', () => {
  it('accepts registered WKT1 and WKT2 systems, by code or by registered name', () => {
    assert.equal(parseCoordinateSystem(wkt(32632)).epsg, 32632);
    assert.equal(parseCoordinateSystem(UTM32N_WKT2).epsg, 32632);
    assert.equal(parseCoordinateSystem(wkt(32632).replace(/,AUTHORITY\["EPSG","32632"\]\]$/, ']')).epsg, 32632, 'found by its name');
    const compound = parseCoordinateSystem(UTM_EGM96);
    assert.equal(compound.horizontal?.epsg, 32632);
    assert.equal(compound.vertical?.epsg, 5773);
    // Registered but semantically unusable systems are accepted here; processing rejects them.
    for (const code of [4326, 4978, 5773, 9707]) assert.equal(parseCoordinateSystem(wkt(code)).epsg, code);
  });

  it('rejects text that is not WKT', () => {
    rejects('', /WKT/);
    rejects('EPSG:32632', /Not valid WKT/);
    rejects('+proj=utm +zone=32 +datum=WGS84', /Not valid WKT/);
    rejects(`${wkt(32632)}]`, /Not valid WKT/);
    rejects(wkt(32632).slice(0, -1), /Not valid WKT/);
    rejects('SPHEROID["WGS 84",6378137,298.257223563]', /not one of/);
    rejects('PROJCS["WGS 84 / UTM zone 32N",UNIT["metre",1]]', /lacks GEOGCS/);
    rejects(`COMPD_CS["x",${wkt(32632)}]`, /exactly two/);
    rejects(`COMPD_CS["x",${wkt(32632)},${UTM32N_WKT2.replace('PROJCRS', 'VERTCRS')}]`, /mixed/);
  });

  it('rejects WKT that names no EPSG-registered system', () => {
    rejects(wkt(32632).replace('"32632"]]', '"32699999"]]'), /not an EPSG-registered/);
    rejects(wkt(32632).replace('"32632"]]', '"5773"]]'), /vertical system/);
    rejects(wkt(32632).replace(/,AUTHORITY\["EPSG","32632"\]\]$/, ']').replace('WGS 84 / UTM zone 32N', 'My site grid'), /names no EPSG-registered/);
    rejects(ARBITRARY_WKT, /names no EPSG-registered/);
    rejects(`COMPD_CS["x",${wkt(32632)},${wkt(5773).replace(/,AUTHORITY\["EPSG","5773"\]\]$/, ']').replace('EGM96 height', 'Local height')}]`, /Local height/);
  });
});

describe('output CRS rules (processing errors 10611-10615)', () => {
  const check = (text: string, options = {}) => checkOutputCrs(parseCoordinateSystem(text), options);

  it('accepts projected systems, with or without a vertical component', () => {
    assert.deepEqual(check(wkt(32632)), { ok: true });
    assert.deepEqual(check(UTM32N_WKT2), { ok: true });
    assert.deepEqual(check(UTM_EGM96), { ok: true });
    assert.deepEqual(check(wkt(2263)), { ok: true }, 'US survey feet on both axes is isometric');
    assert.deepEqual(check(wkt(3901)), { ok: true }, 'a registered compound system');
    assert.deepEqual(check(UTM_EGM96, { geoidHeight: 47.5 }), { ok: true });
    assert.deepEqual(check(UTM_EGM96, { geoidModel: 'EGM2008' }), { ok: true });
    assert.deepEqual(check(UTM_EGM96_GRID), { ok: true });
  });

  it('10613: no horizontal component', () => {
    const result = check(wkt(5773));
    assert.equal(result.ok || result.code, 10613);
  });

  it('10611: not isometric (degrees, or axes in different units)', () => {
    for (const text of [
      wkt(4326),
      wkt(9707),
      `COMPD_CS["NY Long Island (ftUS) + NAVD88 height (m)",${wkt(2263)},${wkt(5703)}]`,
      UTM32N_WKT2.replace('AXIS["northing",north,ORDER[2],LENGTHUNIT["metre",1]]', 'AXIS["northing",north,ORDER[2],LENGTHUNIT["foot",0.3048]]'),
    ]) {
      const result = check(text);
      assert.equal(result.ok || result.code, 10611, text.slice(0, 80));
    }
    assert.deepEqual(check(`COMPD_CS["NY Long Island (ftUS) + NAVD88 height (ftUS)",${wkt(2263)},${wkt(6360)}]`), { ok: true });
  });

  it('10612: not projected or arbitrary (geocentric)', () => {
    const result = check(wkt(4978));
    assert.equal(result.ok || result.code, 10612);
  });

  it('10614: geoid model or height without a vertical component', () => {
    for (const options of [{ geoidHeight: 47.5 }, { geoidModel: 'EGM2008' }]) {
      const result = check(wkt(32632), options);
      assert.equal(result.ok || result.code, 10614);
    }
  });

  it('10615: geoid height together with a geoid model', () => {
    const fromField = check(UTM_EGM96, { geoidHeight: 47.5, geoidModel: 'EGM2008' });
    assert.equal(fromField.ok || fromField.code, 10615);
    const fromWkt = check(UTM_EGM96_GRID, { geoidHeight: 47.5 });
    assert.equal(fromWkt.ok || fromWkt.code, 10615);
  });

  it('checks in a fixed order: horizontal, isometric, projected, geoid rules', () => {
    const pureVertical = check(wkt(5773), { geoidHeight: 1, geoidModel: 'x' });
    assert.equal(pureVertical.ok || pureVertical.code, 10613);
    const geographic = check(wkt(4326), { geoidHeight: 1 });
    assert.equal(geographic.ok || geographic.code, 10611);
  });
});

describe('output system resolution', () => {
  it('defaults to WGS 84 / UTM (zone of the images) + EGM96 height when images carry positions', () => {
    const result = resolveOutputCrs({ requested: null, positions: [{ latitude: 46.5183, longitude: 6.5619 }] });
    assert.ok(result.ok);
    assert.equal(result.crs.source, 'default');
    assert.equal(result.crs.horizontal_epsg, 32632);
    assert.equal(result.crs.vertical_epsg, 5773);
    assert.match(result.crs.proj4, /\+zone=32 /);
    assert.deepEqual(parseCoordinateSystem(result.crs.wkt).horizontal?.epsg, 32632, 'the recorded WKT is itself valid and registered');
    const south = resolveOutputCrs({ requested: null, positions: [{ latitude: -33.92, longitude: 18.42 }] });
    assert.ok(south.ok && south.crs.horizontal_epsg === 32734);
  });

  it('is arbitrary when images carry no position and nothing is requested', () => {
    const result = resolveOutputCrs({ requested: null, positions: [] });
    assert.ok(result.ok);
    assert.equal(result.crs.type, 'arbitrary');
    assert.equal(result.crs.wkt, ARBITRARY_WKT);
    assert.equal(projectorFor(result.crs), null);
  });

  it('adds EGM96 height, in the horizontal unit, to a requested system without a vertical component', () => {
    const metre = resolveOutputCrs({ requested: wkt(32632), positions: [] });
    assert.ok(metre.ok);
    assert.equal(metre.crs.vertical_epsg, 5773);
    assert.equal(metre.crs.source, 'requested');
    const feet = resolveOutputCrs({ requested: wkt(2263), positions: [] });
    assert.ok(feet.ok);
    assert.equal(feet.crs.vertical_name, 'EGM96 height (US survey foot)');
    assert.deepEqual(checkOutputCrs({ ...parseCoordinateSystem(wkt(2263)) }), { ok: true });
    const wkt2 = resolveOutputCrs({ requested: UTM32N_WKT2, positions: [] });
    assert.ok(wkt2.ok);
    assert.match(wkt2.crs.wkt, /^COMPOUNDCRS\[/);
    assert.equal(parseCoordinateSystem(wkt2.crs.wkt).vertical?.epsg, 5773);
    const kept = resolveOutputCrs({ requested: UTM_EGM96_GRID, positions: [] });
    assert.ok(kept.ok);
    assert.equal(kept.crs.wkt, UTM_EGM96_GRID);
    assert.equal(kept.crs.geoid_model, 'egm96_15.gtx');
  });

  it('fails with the rule codes', () => {
    const result = resolveOutputCrs({ requested: wkt(4326), positions: [{ latitude: 1, longitude: 1 }] });
    assert.equal(result.ok || result.code, 10611);
  });

  it('projects WGS 84 positions into the output system, in its unit and axis order', () => {
    const utm = resolveOutputCrs({ requested: null, positions: [{ latitude: 46.5, longitude: 9 }] });
    assert.ok(utm.ok);
    const p = projectorFor(utm.crs)!(46.5, 9)!;
    assert.ok(Math.abs(p.x - 500000) < 0.01, 'on the central meridian');
    assert.ok(Math.abs(p.y - 5149603.36) < 0.1);
    const feet = resolveOutputCrs({ requested: wkt(2263), positions: [] });
    assert.ok(feet.ok);
    const f = projectorFor(feet.crs)!(40.7, -73.9)!;
    assert.ok(f.x > 900_000 && f.x < 1_100_000, 'US survey feet');
    const swapped = { ...utm.crs, axis_order: ['north', 'east'] };
    const s = projectorFor(swapped)!(46.5, 9)!;
    assert.ok(Math.abs(s.y - 500000) < 0.01, 'x and y follow the axis order');
  });
});

describe('UTM zones', () => {
  it('from longitude, hemisphere from latitude', () => {
    assert.deepEqual(utmZone(46.5, 6.56), { zone: 32, hemisphere: 'N', epsg: 32632 });
    assert.deepEqual(utmZone(-33.9, 18.4), { zone: 34, hemisphere: 'S', epsg: 32734 });
    assert.equal(utmZone(0, -180).zone, 1);
    assert.equal(utmZone(0, 179.99).zone, 60);
    assert.equal(utmZone(0, 180).zone, 1, 'wraps');
    assert.equal(utmZone(10, -0.0001).zone, 30);
    assert.equal(utmZone(10, 0).zone, 31);
  });

  it('Norway and Svalbard exceptions', () => {
    assert.equal(utmZone(60, 5).zone, 32, 'Bergen');
    assert.equal(utmZone(55, 5).zone, 31, 'south of 56°N');
    assert.equal(utmZone(78, 8).zone, 31);
    assert.equal(utmZone(78, 10).zone, 33);
    assert.equal(utmZone(78, 25).zone, 35);
    assert.equal(utmZone(78, 35).zone, 37);
  });

  it('of a set of positions: their centre, across the antimeridian too', () => {
    assert.equal(utmZoneOfPositions([{ latitude: 46, longitude: 5.9 }, { latitude: 46, longitude: 6.3 }]).zone, 32);
    assert.equal(utmZoneOfPositions([{ latitude: -17, longitude: 179.9 }, { latitude: -17, longitude: -179.7 }]).zone, 1);
  });
});
