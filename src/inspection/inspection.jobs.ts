// The inspection service's job catalogue: name -> payload.
export type InspectionJobs = {
  'inspection.analyze-images': { inspectionId: number };
  'inspection.track-photogrammetry': { inspectionId: number };
  'inspection.clip-point-cloud': { inspectionId: number };
  /** Copies a retry's inputs from its original into its own project, registers them, starts processing. */
  'inspection.prepare-retry': { inspectionId: number };
  'inspection.build-inputs-zip': { inspectionId: number };
  'inspection.build-report': { inspectionId: number };
  'inspection.send-email': { to: string; subject: string; text: string };
  /** Cloud projects, project group and stored files of deleted inspections and assets. */
  'inspection.delete-resources': { projectIds: number[]; projectGroupId: number | null; inspectionIds: number[] };
};
