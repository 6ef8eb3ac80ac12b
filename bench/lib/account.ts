// The demo account a server creates on its first start (BOOTSTRAP_DEMO), logged in with the SDK
// client, and an inspection to work on.
import fs from 'node:fs';
import { bootstrapFile, type DemoCredentials } from '../../src/admin/bootstrap.ts';
import { InspectionClient } from '../../src/sdk/inspection-client.ts';
import type { Server } from './processes.ts';

export interface BenchAccount {
  client: InspectionClient;
  demo: DemoCredentials;
  /** The three headers every authenticated call sends. */
  headers: Record<string, string>;
}

export async function loginDemo(server: Server): Promise<BenchAccount> {
  const demo = JSON.parse(fs.readFileSync(bootstrapFile(server.dataDir), 'utf8')) as DemoCredentials;
  const client = new InspectionClient({ baseUrl: server.urls.inspection, apiKey: demo.api_key, organizationUuid: demo.organization_uuid });
  await client.login(demo.username, demo.password);
  return {
    client,
    demo,
    headers: { 'x-api-key': demo.api_key, authorization: `Bearer ${client.token}`, 'vendor-organization-uuid': demo.organization_uuid },
  };
}

export async function newInspection(account: BenchAccount, name: string): Promise<{ id: number; project_id: number }> {
  const asset = await account.client.createAsset({ name: `${name} tower`, type: 1, latitude: '55.70580000', longitude: '13.19100000' });
  return account.client.createInspection({ asset: asset.id, name, processing_parameters: { generate_point_cloud: true } });
}
