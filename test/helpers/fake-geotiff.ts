// Small, valid GeoTIFFs for tests (classic TIFF, little-endian, uncompressed, one strip): an RGB
// orthophoto or a float32 elevation model, north-up, in an EPSG system, as ODM writes them
// (ModelPixelScale + ModelTiepoint + GeoKeyDirectory with ProjectedCSTypeGeoKey). gdalinfo reads
// them, which the outputs test checks when GDAL is installed.

export interface FakeGeoTiff {
  width: number;
  height: number;
  /** Model coordinates of the top-left corner of the top-left pixel. */
  originX: number;
  originY: number;
  /** Pixel size in model units (x and y). */
  pixel: number;
  epsg: number;
  kind: 'rgb' | 'elevation';
  /** GTRasterTypeGeoKey 2: the tiepoint names the centre of the pixel. */
  pixelIsPoint?: boolean;
}

export function fakeGeoTiff(spec: FakeGeoTiff): Buffer {
  const rgb = spec.kind === 'rgb';
  const spp = rgb ? 3 : 1;
  const bytesPerSample = rgb ? 1 : 4;
  const pixels = Buffer.alloc(spec.width * spec.height * spp * bytesPerSample);
  for (let row = 0; row < spec.height; row++) {
    for (let col = 0; col < spec.width; col++) {
      const i = row * spec.width + col;
      if (rgb) pixels.set([(col * 7) & 255, (row * 5) & 255, 128], i * 3);
      else pixels.writeFloatLE(200 + col * 0.01 + row * 0.02, i * 4);
    }
  }
  const shift = spec.pixelIsPoint ? 0.5 : 0;
  const geoKeys = [1, 1, 0, 3, 1024, 0, 1, 1, 1025, 0, 1, spec.pixelIsPoint ? 2 : 1, 3072, 0, 1, spec.epsg];
  // [tag, type, values]: 3 SHORT, 4 LONG, 12 DOUBLE. Offsets are filled in below.
  const entries: [number, number, number[]][] = [
    [256, 4, [spec.width]],
    [257, 4, [spec.height]],
    [258, 3, Array(spp).fill(bytesPerSample * 8)],
    [259, 3, [1]],
    [262, 3, [rgb ? 2 : 1]],
    [273, 4, [0]], // strip offset, patched
    [277, 3, [spp]],
    [278, 4, [spec.height]],
    [279, 4, [pixels.length]],
    [284, 3, [1]],
    [339, 3, Array(spp).fill(rgb ? 1 : 3)],
    [33550, 12, [spec.pixel, spec.pixel, 0]],
    // PixelIsPoint: raster (0, 0) names the centre of the first pixel, half a pixel inside the corner.
    [33922, 12, [0, 0, 0, spec.originX + shift * spec.pixel, spec.originY - shift * spec.pixel, 0]],
    [34735, 3, geoKeys],
  ];
  const size = (type: number) => (type === 3 ? 2 : type === 4 ? 4 : 8);
  const ifdSize = 2 + entries.length * 12 + 4;
  let extraAt = 8 + ifdSize;
  const extra: Buffer[] = [];
  const table = Buffer.alloc(ifdSize);
  table.writeUInt16LE(entries.length, 0);
  entries.forEach(([tag, type, values], i) => {
    const at = 2 + i * 12;
    table.writeUInt16LE(tag, at);
    table.writeUInt16LE(type, at + 2);
    table.writeUInt32LE(values.length, at + 4);
    const bytes = Buffer.alloc(values.length * size(type));
    values.forEach((v, k) => (type === 3 ? bytes.writeUInt16LE(v, k * 2) : type === 4 ? bytes.writeUInt32LE(v, k * 4) : bytes.writeDoubleLE(v, k * 8)));
    if (bytes.length <= 4) bytes.copy(table, at + 8);
    else {
      table.writeUInt32LE(extraAt, at + 8);
      extra.push(bytes);
      extraAt += bytes.length;
    }
  });
  table.writeUInt32LE(extraAt, 2 + 5 * 12 + 8); // StripOffsets: the pixels come after everything else
  const header = Buffer.from([0x49, 0x49, 42, 0, 8, 0, 0, 0]);
  return Buffer.concat([header, table, ...extra, pixels]);
}
