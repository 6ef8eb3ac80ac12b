// DJI's XMP packet, as DJI drones write it: one rdf:Description "DJI Meta Data" whose attributes
// carry the tiff/xmp/dc basics and the drone-dji values (gimbal and aircraft attitude, altitudes,
// speeds, calibration), signed numbers ("+12.30", "-0.50"). Written by the demo photos
// (generate-demo-images.ts) and the tower flight (tower-flight/photo-writer.ts), read by the
// service's image analysis (src/shared/image-metadata) as it reads a real drone's photos.

/** "+12.30", "-0.50": DJI's signed numbers. */
export const signed = (v: number, digits = 2) => `${v < 0 ? '-' : '+'}${Math.abs(v).toFixed(digits)}`;

export function escapeXml(s: string): string {
  return s.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** The packet with these attributes (qualified names, e.g. ['drone-dji:GimbalPitchDegree', signed(-30)]), in this order. */
export function djiXmpPacket(attributes: readonly (readonly [string, string])[]): string {
  return [
    '<?xpacket begin="\uFEFF" id="W5M0MpCehiHzreSzNTczkc9d"?>',
    '<x:xmpmeta xmlns:x="adobe:ns:meta/">',
    ' <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">',
    '  <rdf:Description rdf:about="DJI Meta Data"',
    '    xmlns:tiff="http://ns.adobe.com/tiff/1.0/"',
    '    xmlns:exif="http://ns.adobe.com/exif/1.0/"',
    '    xmlns:xmp="http://ns.adobe.com/xap/1.0/"',
    '    xmlns:dc="http://purl.org/dc/elements/1.1/"',
    '    xmlns:drone-dji="http://www.dji.com/drone-dji/1.0/"',
    ...attributes.map(([name, value]) => `    ${name}="${escapeXml(value)}"`),
    '  />',
    ' </rdf:RDF>',
    '</x:xmpmeta>',
    '<?xpacket end="w"?>',
  ].join('\n');
}
