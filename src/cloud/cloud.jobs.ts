// The cloud service's job catalogue: name -> payload.
export type CloudJobs = {
  'cloud.process-project': { projectId: number };
  /** Builds the inputs ZIP of the bundle row `outputId` (bundles/inputs-bundle.ts). */
  'cloud.build-inputs-zip': { projectId: number; outputId: number };
  /** One attempt at delivering a webhook message (webhooks/cloud-webhooks.ts); a failed one queues the next, delayed. */
  'cloud.deliver-webhook': { messageId: number };
  /** An e-mail to a client's notification address (notifications/cloud-mail.ts). */
  'cloud.send-email': { to: string; subject: string; text: string };
};
