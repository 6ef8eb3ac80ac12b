// Processing parameters this installation accepts (the spec lists them) but cannot act on, with
// the reason the console shows beside the option it disables (GET /v1/console/settings/,
// `unavailable_options`). roof_segmentation is stored and never read: no segmentation model ships.
// detect_antennas is not here: the detector ships (inventory/antenna-detection.ts); it needs the
// engine's point cloud (output-availability.ts lists it when no engine can make one), and a run
// without one ends in inventory status 7 with the reason.
// Outputs (point cloud, mesh, DSM, orthophoto) are not here either: whether they can be made
// depends on the cloud's engine, which says so (output-availability.ts adds them to the list).

export const UNAVAILABLE_PROCESSING_OPTIONS: Readonly<Record<string, string>> = {
  roof_segmentation: 'Not available here: no roof segmentation model is installed.',
};
