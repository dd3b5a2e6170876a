/**
 * @module One tenant's share of the workspace disk: how many workspaces it keeps and their unpacked
 * bytes together, uploads in flight included. An upload reserves its files' bytes as their headers
 * arrive, before they are written, and a block for each folder it makes, so two concurrent uploads
 * cannot both squeeze past the quota; the workspace an upload replaces does not count against it.
 */
import { BadRequestError } from "./errors.js";

export interface Quota {
  /** all of a tenant's workspaces together, unpacked; @default 1 GiB ([server] or [[tenants]] max_workspace_bytes) */
  maxWorkspaceBytes: number;
  /** @default 100 ([server] or [[tenants]] max_workspaces) */
  maxWorkspaces: number;
}

export interface Upload {
  readonly id: string;
  bytes: number;
}

const WHERE = "[server], or the tenant's own [[tenants]] entry";

export class TenantUsage {
  /** unpacked bytes of each stored workspace */
  private readonly stored: Map<string, number>;
  private readonly uploads = new Set<Upload>();

  constructor(stored: Iterable<[string, number]>) {
    this.stored = new Map(stored);
  }

  /** Starts an upload of `id`; refused at once when it would be one workspace too many. */
  begin(id: string, quota: Quota): Upload {
    const ids = new Set(this.stored.keys());
    for (const u of this.uploads) ids.add(u.id);
    if (!ids.has(id) && ids.size >= quota.maxWorkspaces)
      throw new BadRequestError(`the tenant already has ${quota.maxWorkspaces} workspaces, its limit (max_workspaces in ${WHERE}): delete one or reuse its id`, "id", "tenant_workspace_count");
    const upload: Upload = { id, bytes: 0 };
    this.uploads.add(upload);
    return upload;
  }

  /** Reserves `bytes` more for an upload, or refuses them when the tenant's workspaces together would pass the quota. */
  reserve(upload: Upload, bytes: number, quota: Quota): void {
    let total = upload.bytes + bytes;
    for (const [id, stored] of this.stored) if (id !== upload.id) total += stored;
    for (const other of this.uploads) if (other !== upload) total += other.bytes;
    if (total > quota.maxWorkspaceBytes)
      throw new BadRequestError(`the tenant's workspaces would hold more than ${quota.maxWorkspaceBytes} bytes unpacked together (max_workspace_bytes in ${WHERE})`, "body", "tenant_workspace_bytes");
    upload.bytes += bytes;
  }

  /**
   * The upload is stored: its size replaces the old one's. What it reserved (files' bytes and a
   * block per folder) stays charged when `bytes` counts less.
   */
  commit(upload: Upload, bytes: number): void {
    this.uploads.delete(upload);
    this.stored.set(upload.id, Math.max(bytes, upload.bytes));
  }

  abort(upload: Upload): void {
    this.uploads.delete(upload);
  }

  remove(id: string): void {
    this.stored.delete(id);
  }
}
