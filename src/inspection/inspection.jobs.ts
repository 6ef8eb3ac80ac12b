// The inspection service's job catalogue: name -> payload.
export type InspectionJobs = {
  'inspection.analyze-images': { inspectionId: number };
  'inspection.track-photogrammetry': { inspectionId: number };
};
