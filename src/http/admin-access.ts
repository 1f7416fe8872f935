/**
 * Who may read /v1/* (docs/contract.md "HTTP"), decided by the listener a request came in on, never
 * by the client's address (a service-mesh proxy on the pod makes every client look local):
 * - the admin listener (http.adminHost:http.adminPort) bound to a loopback address answers
 *   without a token: only processes of the pod reach it (like Envoy's admin interface);
 * - the admin listener bound elsewhere, and the main listener (http.host:http.port) when
 *   http.adminToken is set, require `Authorization: Bearer <token>` (401 otherwise), compared
 *   in constant time;
 * - the main listener without a token does not serve /v1/* (404 saying where it is).
 * An admin listener off loopback without a token is refused at start (adminListenerProblem).
 * Probes and /metrics are not asked about (see isAdminPath).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

export interface Refusal {
  status: 401 | 404;
  error: string;
  headers: Record<string, string>;
}

/** Which listener a request came in on. */
export type Listener = 'main' | 'admin';

export const isAdminPath = (path: string): boolean => path === '/v1' || path.startsWith('/v1/');

/** A host to bind that only the machine itself reaches: localhost, 127.0.0.0/8, ::1 (also as IPv4-mapped or in brackets). */
export const isLoopbackHost = (host: string): boolean => {
  const bare = host.trim().toLowerCase().replace(/^\[(.*)\]$/, '$1');
  return bare === 'localhost' || bare === '::1' || /^(::ffff:)?127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(bare);
};

/** The settings error of an admin listener that would answer anyone: off loopback without a token. */
export const adminListenerProblem = ({ adminHost, adminToken }: { adminHost: string; adminToken?: string }): string | undefined =>
  isLoopbackHost(adminHost) || (adminToken ?? '') !== ''
    ? undefined
    : `http.adminHost = "${adminHost}" (SLUICE_HTTP_ADMIN_HOST): expected a loopback address (127.0.0.1, ::1, localhost) while http.adminToken (SLUICE_HTTP_ADMIN_TOKEN) is empty; ` +
      'off loopback /v1/* would answer anyone who reaches it: set http.adminToken, or bind http.adminHost to 127.0.0.1';

/** Digests first: equal lengths for timingSafeEqual, and the token's length does not show. */
const digest = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest();

const bearerOf = (header: string | undefined): string | undefined => /^Bearer +(\S+) *$/i.exec(header ?? '')?.[1];

const notHere: Refusal = {
  status: 404,
  error: '/v1/* is served on the admin listener (http.adminHost:http.adminPort, 127.0.0.1:9465 by default), not on http.port; ' +
    'set http.adminToken (SLUICE_HTTP_ADMIN_TOKEN) to read it here with Authorization: Bearer <token>',
  headers: {},
};

/**
 * The access rule of one listener; `adminHost` is where the admin listener is bound. The
 * returned function answers undefined (let the request through) or the refusal to send.
 */
export const adminAccess = ({ listener, adminHost, adminToken }: { listener: Listener; adminHost: string; adminToken?: string }) => {
  if (listener === 'admin' && isLoopbackHost(adminHost)) return (): Refusal | undefined => undefined;
  const expected = adminToken !== undefined && adminToken !== '' ? digest(adminToken) : undefined;
  return (request: IncomingMessage): Refusal | undefined => {
    if (expected === undefined) return notHere;
    const offered = bearerOf(request.headers.authorization);
    if (offered !== undefined && timingSafeEqual(digest(offered), expected)) return undefined;
    return {
      status: 401,
      error: `/v1/* requires Authorization: Bearer <http.adminToken>; ${offered === undefined ? 'none was sent' : 'the token sent is not it'}`,
      headers: { 'www-authenticate': 'Bearer realm="sluice"' },
    };
  };
};
