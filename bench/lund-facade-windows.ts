// Four facade windows of lund (test/fixtures/lund/images, 1024 x 768, pixel coordinates as stored:
// u right, v down from the top-left corner), each seen in photos 05 and 06 and read by eye from 3x
// crops with an 8 px grid: the window's glass centre in both photos, and its frame's extent in 06
// (where it is larger), which is the rectangle bench/coords3d-facade.ts draws. Photo 05 stands a
// few metres behind 06 along the street; the yellow house is on the left, the white one on the
// right. The pairing was checked by the two rays' closest approach (printed by the bench).
export interface FacadeWindow {
  name: string;
  /** Glass centre in 05.jpg and in 06.jpg. */
  centre05: [number, number];
  centre06: [number, number];
  /** Frame in 06.jpg: [u0, v0, u1, v1]. */
  frame06: [number, number, number, number];
}

export const LUND_FACADE_WINDOWS: FacadeWindow[] = [
  // The yellow house's last two windows before its drainpipe (05: 272-287 x 319-409 and 296-305 x 325-409).
  { name: 'yellow, second to last', centre05: [279.5, 364], centre06: [96, 380], frame06: [76, 296, 117, 463] },
  { name: 'yellow, last', centre05: [300.5, 367], centre06: [158.5, 390], frame06: [143, 317, 174, 463] },
  // The white house's two farthest windows, after the brick house's drainpipe (05: 705-713 x 303-387 and 723-733 x 292-387).
  { name: 'white, farthest', centre05: [709, 345], centre06: [838.5, 325], frame06: [824, 251, 853, 400] },
  { name: 'white, second farthest', centre05: [728, 339.5], centre06: [889.5, 306], frame06: [871, 220, 908, 393] },
];
