// The OGC WKT (WKT1, as GDAL writes it) of "WGS 84 / UTM zone <n><N|S> + EGM96 height", the output
// system the cloud service gives a georeferenced project without a requested coordinate_system
// (cloud coordinate-systems/crs.ts resolveOutputCrs, the same string). The inspection service
// names its system with it before any engine has written outputs, so that `extras.coordinate_system`
// is WKT whatever the engine and whatever the stage (docs/inspection-service.md, "Extras").
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** EPSG code of "EGM96 height". */
const EGM96_HEIGHT = 5773;

function registryWkt(code: number): string {
  const entry = require(`epsg-index/s/${code}.json`) as { wkt: string | null; name: string };
  if (!entry.wkt) throw new Error(`EPSG:${code} has no WKT1`);
  return entry.wkt;
}

/** COMPD_CS of the UTM zone (EPSG 326zz / 327zz) and EGM96 height. */
export function utmWithEgm96Wkt(utmEpsg: number): string {
  const horizontal = registryWkt(utmEpsg);
  const name = /^PROJCS\["([^"]*)"/.exec(horizontal)?.[1] ?? `EPSG:${utmEpsg}`;
  return `COMPD_CS["${name} + EGM96 height",${horizontal},${registryWkt(EGM96_HEIGHT)}]`;
}
