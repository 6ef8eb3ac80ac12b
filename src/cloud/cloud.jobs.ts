// The cloud service's job catalogue: name -> payload.
export type CloudJobs = {
  'cloud.process-project': { projectId: number };
};
