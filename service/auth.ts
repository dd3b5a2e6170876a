/**
 * @module Bearer tokens → tenants. Tokens are stored as SHA-256 digests; the digest of the presented
 * token is compared with every tenant's in constant time, so timing tells nothing.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { Tenant } from "../engine/index.js";

/** The SHA-256 of the token `authorization` carries (`Bearer <token>`), if it carries one. */
function presentedDigest(authorization: string | undefined): Buffer | undefined {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? "");
  return m ? createHash("sha256").update(m[1]!).digest() : undefined;
}

export function tenantForToken(tenants: readonly Tenant[], authorization: string | undefined): Tenant | undefined {
  const presented = presentedDigest(authorization);
  if (!presented) return undefined;
  let found: Tenant | undefined;
  for (const tenant of tenants) {
    // No early exit: every tenant is compared.
    if (timingSafeEqual(presented, Buffer.from(tenant.tokenSha256, "hex")) && !found) found = tenant;
  }
  return found;
}

/** Whether `authorization` carries the token whose SHA-256 is `sha256` (compared in constant time). */
export function holdsToken(sha256: string, authorization: string | undefined): boolean {
  const presented = presentedDigest(authorization);
  return presented !== undefined && timingSafeEqual(presented, Buffer.from(sha256, "hex"));
}
