// The inspection service's client of the cloud project-processing service: its public HTTP API
// only, with client credentials of its own. Its client is a service client of the cloud: it acts
// for the organization of each inspection and asset (a token asked with `organization_uuid`,
// docs/cloud-service.md "Service clients"), so their projects and project groups belong to that
// organization and its own cloud clients see them (issue 30). Records of a user without an
// organization stay in the service's own cloud organization. Tokens are cached per organization
// until shortly before they expire. Cloud failures come back as ApiErrors the inspection routes
// can pass on: the cloud's 4xx as the same status, anything else (connection refused, 5xx) as 503
// unavailable.
import type { StorageCredentialsRecord } from '../../shared/schemas/storage-credentials.ts';
import { ApiError, unavailable, ValidationError, type FieldErrors } from '../../infra/http/errors.ts';
import type { CloudMapLayer } from '../ortho/raster-layers.ts';

export interface CloudProject {
  id: number;
  uuid: string;
  public_status: string;
  display_detailed_status: string;
  error_code: number | null;
  error_reason: string;
  image_count: number;
  s3_base_path: string;
  bucket_name: string;
  /** The rasters processing made, with their WGS 84 extent and zooms (ortho/raster-layers.ts). */
  outputs?: { map?: { layers?: CloudMapLayer[] } };
}

export type CloudStorageCredentials = StorageCredentialsRecord;

export interface CloudOutput {
  output_id: number;
  output_type: string;
  availability: string;
  s3_key: string | null;
  s3_bucket: string | null;
  /** The output's group (`ortho`, `dsm`, `dtm`, ...). */
  result_type?: string;
  /** Why an output is `not available` (the engine's reason). */
  note?: string | null;
}

/** One engine's answer in the cloud's GET /project/api/v3/capabilities/ (docs/cloud-service.md, "Capabilities"). */
export interface CloudEngineCapabilities {
  engine: string;
  /** point_cloud, mesh, dsm, ortho: whether the engine makes it at all, and if not why. */
  outputs: Record<string, { available: boolean; reason: string | null } | undefined>;
}

/** The default engine's capabilities, and every offered engine's. */
export interface CloudCapabilities extends CloudEngineCapabilities {
  engines: CloudEngineCapabilities[];
}

export interface CloudClientOptions {
  baseUrl: () => string;
  clientId: string;
  clientSecret: string;
  userAgent: string;
  /** The uuid of an organization of this service (its cloud organization has the same uuid). */
  organizationUuid: (organizationId: number) => Promise<string>;
}

/** Whose records a call acts on: an inspection's or an asset's organization (null: a user's own). */
export interface CloudOwner {
  organization_id: number | null;
}

export class CloudClient {
  private readonly tokens = new Map<string, { value: string; expiresAt: number }>();
  private readonly tokenRequests = new Map<string, Promise<string>>();
  /** Organization uuids never change: kept once read. */
  private readonly uuids = new Map<number, string>();

  constructor(private readonly options: CloudClientOptions) {}

  /** The cloud API acting for the owner's organization (or in the service's own, for a user's records). */
  as(owner: CloudOwner): CloudScope {
    return new CloudScope(this, owner.organization_id);
  }

  /**
   * @internal CloudScope's transport. `readOnly`: with a token asked for `read:cloud` only, so that
   * what the cloud hands out for it (storage credentials) only reads.
   */
  async callFor<T>(organizationId: number | null, method: string, path: string, body?: unknown, readOnly = false): Promise<T> {
    let organization = '';
    if (organizationId !== null) {
      organization = this.uuids.get(organizationId) ?? (await this.options.organizationUuid(organizationId));
      this.uuids.set(organizationId, organization);
    }
    return this.call<T>({ organization, readOnly }, method, path, body);
  }

  private async call<T>(who: TokenFor, method: string, path: string, body?: unknown, retried = false): Promise<T> {
    const token = await this.accessToken(who);
    let response: Response;
    try {
      response = await fetch(`${this.options.baseUrl()}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          'user-agent': this.options.userAgent,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (err) {
      throw unavailable(`The cloud processing service is unreachable (${(err as Error).message}).`);
    }
    if (response.status === 401 && !retried) {
      this.tokens.delete(tokenKey(who)); // revoked or expired early: one fresh token, then give up
      return this.call(who, method, path, body, true);
    }
    const text = await response.text();
    const parsed = text ? safeJson(text) : undefined;
    if (response.ok) return parsed as T;
    if (response.status === 400 && parsed && typeof parsed === 'object') throw new ValidationError(parsed as FieldErrors);
    if (response.status >= 400 && response.status < 500 && response.status !== 401 && response.status !== 403) {
      const detail = (parsed as { detail?: string } | undefined)?.detail ?? `Cloud service answered ${response.status}.`;
      const code = (parsed as { code?: string } | undefined)?.code ?? 'cloud_error';
      throw new ApiError(response.status, code, detail);
    }
    // A 503 of the cloud says which dependency is down and why (e.g. the S3 store's STS): passed on.
    const cause = response.status === 503 ? (parsed as { detail?: unknown } | undefined)?.detail : undefined;
    throw unavailable(`The cloud processing service answered ${response.status} to ${method} ${path}${typeof cause === 'string' ? `: ${cause}` : '.'}`);
  }

  private async accessToken(who: TokenFor): Promise<string> {
    const key = tokenKey(who);
    const cached = this.tokens.get(key);
    if (cached && cached.expiresAt > Date.now() + 60_000) return cached.value;
    let request = this.tokenRequests.get(key);
    if (!request) {
      request = this.requestToken(who).finally(() => this.tokenRequests.delete(key));
      this.tokenRequests.set(key, request);
    }
    return request;
  }

  private async requestToken(who: TokenFor): Promise<string> {
    const { organization, readOnly } = who;
    let response: Response;
    try {
      response = await fetch(`${this.options.baseUrl()}/oauth2/token/`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': this.options.userAgent },
        body: new URLSearchParams({
          grant_type: 'client_credentials',
          client_id: this.options.clientId,
          client_secret: this.options.clientSecret,
          token_format: 'jwt',
          ...(organization ? { organization_uuid: organization } : {}),
          ...(readOnly ? { scope: 'read:cloud' } : {}),
        }),
      });
    } catch (err) {
      throw unavailable(`The cloud processing service is unreachable (${(err as Error).message}).`);
    }
    if (!response.ok) throw unavailable(`The cloud processing service refused this service's credentials (${response.status}).`);
    const body = (await response.json()) as { access_token: string; expires_in: number };
    this.tokens.set(tokenKey(who), { value: body.access_token, expiresAt: Date.now() + body.expires_in * 1000 });
    return body.access_token;
  }
}

/** Whom a cloud token acts for: an organization's uuid ('' for the service's own), and whether it only reads. */
interface TokenFor {
  organization: string;
  readOnly: boolean;
}

const tokenKey = (who: TokenFor) => `${who.organization}${who.readOnly ? ' read-only' : ''}`;

/** The cloud API's operations this service uses, acting for one organization (CloudClient.as). */
export class CloudScope {
  constructor(
    private readonly client: CloudClient,
    private readonly organizationId: number | null,
  ) {}

  private call<T>(method: string, path: string, body?: unknown): Promise<T> {
    return this.client.callFor<T>(this.organizationId, method, path, body);
  }

  createProjectGroup(name: string): Promise<{ id: number; uuid: string }> {
    return this.call('POST', '/project/api/v3/project-groups/', { name, project_group_type: 'bim' });
  }

  /**
   * Deletes a project group. Not in the cloud API yet (issue 3 adds it): callers tolerate 404 and
   * 405 and leave the empty group behind.
   */
  async deleteProjectGroup(id: number): Promise<void> {
    await this.call('DELETE', `/project/api/v3/project-groups/${id}/`);
  }

  listProjectGroups(): Promise<{ id: number; uuid: string }[]> {
    return this.call('GET', '/project/api/v3/project-groups/');
  }

  createProject(name: string, projectGroupId: number | null): Promise<CloudProject> {
    return this.call('POST', '/project/api/v3/projects/', { name, project_group_id: projectGroupId });
  }

  getProject(id: number): Promise<CloudProject> {
    return this.call('GET', `/project/api/v3/projects/${id}/`);
  }

  listProjects(): Promise<(CloudProject & { project_group_id?: number | null })[]> {
    return this.call('GET', '/project/api/v3/projects/');
  }

  async deleteProject(id: number): Promise<void> {
    await this.call('DELETE', `/project/api/v3/projects/${id}/`);
  }

  /**
   * Hands projects and project groups the service made in its own organization over to the one
   * this scope acts for (the cloud's move_batch, extended for service clients). Needs an organization.
   */
  async handOver(organizationUuid: string, nodes: { type: 'project' | 'project_group'; uuid: string }[]): Promise<number> {
    const body = { owner_uuid: organizationUuid, source_nodes: nodes, target_type: 'organization', target_uuid: organizationUuid };
    return (await this.call<{ moved: number }>('PUT', '/common/api/v4/drive/move_batch/', body)).moved;
  }

  /** `readOnly`: credentials that only read (asked with a read-only token: the cloud's IssueOptions.writable false). */
  storageCredentials(projectId: number, readOnly = false): Promise<CloudStorageCredentials> {
    return this.client.callFor(this.organizationId, 'GET', `/project/api/v3/projects/${projectId}/s3_credentials/`, undefined, readOnly);
  }

  /** Registers keys; the cloud's field errors are renamed to the inspection API's `image_keys`. */
  async registerInputs(projectId: number, keys: string[]): Promise<number> {
    try {
      const result = await this.call<{ nb_images_registered: number }>('POST', `/project/api/v3/projects/${projectId}/inputs/bulk_register/`, {
        input_file_keys: keys,
      });
      return result.nb_images_registered;
    } catch (err) {
      if (err instanceof ValidationError && err.fields.input_file_keys) throw new ValidationError({ image_keys: err.fields.input_file_keys });
      throw err;
    }
  }

  /** `engine`: the cloud's extension naming one of the engines it offers (default: the cloud's own). */
  startProcessing(projectId: number, options: { tags?: string[]; engine?: string; outputs?: Record<string, boolean> } = {}): Promise<CloudProject> {
    return this.call('POST', `/project/api/v3/projects/${projectId}/start_processing/`, {
      ...(options.tags ? { tags: options.tags } : {}),
      ...(options.engine ? { engine: options.engine } : {}),
      ...(options.outputs ? { outputs: options.outputs } : {}),
    });
  }

  /** What the cloud's engines can make (the same for every organization). */
  capabilities(): Promise<CloudCapabilities> {
    return this.call('GET', '/project/api/v3/capabilities/');
  }

  async outputs(projectId: number): Promise<CloudOutput[]> {
    return (await this.call<{ outputs: CloudOutput[] }>('GET', `/project/api/v3/projects/${projectId}/outputs/`)).outputs;
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
