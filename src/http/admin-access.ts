/**
 * Who may read /v1/* (docs/contract.md "HTTP"): without an admin token, loopback clients only
 * (403); with one, any client that sends `Authorization: Bearer <token>` (401 otherwise),
 * compared in constant time. Forwarding headers are not trusted: the socket's peer decides.
 * Probes and /metrics are not asked about (see isAdminPath).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

export interface Refusal {
  status: 401 | 403;
  error: string;
  headers: Record<string, string>;
}

export const isAdminPath = (path: string): boolean => path === '/v1' || path.startsWith('/v1/');

/** 127.0.0.0/8, ::1, and IPv4 loopback mapped into IPv6 (a dual-stack server's view). */
export const isLoopback = (address: string | undefined): boolean =>
  address !== undefined && (address === '::1' || /^(::ffff:)?127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/i.test(address));

/** Digests first: equal lengths for timingSafeEqual, and the token's length does not show. */
const digest = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest();

const bearerOf = (header: string | undefined): string | undefined => /^Bearer +(\S+) *$/i.exec(header ?? '')?.[1];

/** undefined: let the request through; otherwise the refusal to answer. */
export const adminAccess = (adminToken: string | undefined) => {
  const expected = adminToken !== undefined && adminToken !== '' ? digest(adminToken) : undefined;
  return (request: IncomingMessage): Refusal | undefined => {
    if (expected === undefined) {
      if (isLoopback(request.socket.remoteAddress)) return undefined;
      return {
        status: 403,
        error: '/v1/* answers loopback clients only; set http.adminToken (SLUICE_HTTP_ADMIN_TOKEN) and send Authorization: Bearer <token> to read it from elsewhere',
        headers: {},
      };
    }
    const offered = bearerOf(request.headers.authorization);
    if (offered !== undefined && timingSafeEqual(digest(offered), expected)) return undefined;
    return {
      status: 401,
      error: `/v1/* requires Authorization: Bearer <http.adminToken>; ${offered === undefined ? 'none was sent' : 'the token sent is not it'}`,
      headers: { 'www-authenticate': 'Bearer realm="sluice"' },
    };
  };
};
