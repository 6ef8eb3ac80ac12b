// The inspection service's client of the cloud project-processing service: its public HTTP API
// only, with client credentials of its own. Tokens are cached until shortly before they expire.
// Cloud failures come back as ApiErrors the inspection routes can pass on: the cloud's 4xx as
// the same status, anything else (connection refused, 5xx) as 503 unavailable.
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

export interface CloudClientOptions {
  baseUrl: () => string;
  clientId: string;
  clientSecret: string;
  userAgent: string;
}

export class CloudClient {
  private token: { value: string; expiresAt: number } | undefined;
  private tokenRequest: Promise<string> | undefined;

  constructor(private readonly options: CloudClientOptions) {}

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

  createProject(name: string, projectGroupId: number | null): Promise<CloudProject> {
    return this.call('POST', '/project/api/v3/projects/', { name, project_group_id: projectGroupId });
  }

  getProject(id: number): Promise<CloudProject> {
    return this.call('GET', `/project/api/v3/projects/${id}/`);
  }

  async deleteProject(id: number): Promise<void> {
    await this.call('DELETE', `/project/api/v3/projects/${id}/`);
  }

  storageCredentials(projectId: number): Promise<CloudStorageCredentials> {
    return this.call('GET', `/project/api/v3/projects/${projectId}/s3_credentials/`);
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

  async outputs(projectId: number): Promise<CloudOutput[]> {
    return (await this.call<{ outputs: CloudOutput[] }>('GET', `/project/api/v3/projects/${projectId}/outputs/`)).outputs;
  }

  private async call<T>(method: string, path: string, body?: unknown, retried = false): Promise<T> {
    const token = await this.accessToken();
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
      this.token = undefined; // revoked or expired early: one fresh token, then give up
      return this.call(method, path, body, true);
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

  private async accessToken(): Promise<string> {
    if (this.token && this.token.expiresAt > Date.now() + 60_000) return this.token.value;
    this.tokenRequest ??= this.requestToken().finally(() => (this.tokenRequest = undefined));
    return this.tokenRequest;
  }

  private async requestToken(): Promise<string> {
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
        }),
      });
    } catch (err) {
      throw unavailable(`The cloud processing service is unreachable (${(err as Error).message}).`);
    }
    if (!response.ok) throw unavailable(`The cloud processing service refused this service's credentials (${response.status}).`);
    const body = (await response.json()) as { access_token: string; expires_in: number };
    this.token = { value: body.access_token, expiresAt: Date.now() + body.expires_in * 1000 };
    return body.access_token;
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
