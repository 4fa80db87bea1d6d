// A minimal Kubernetes client for the one thing the browser tests may need to
// do behind the console's back: create a fresh pending CSR when the seeded ones
// were already decided (a devcluster reused across runs), and delete it after.
import crypto from 'node:crypto';
import fs from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import { adminKubeconfig } from './env';

interface Cluster {
  server: string;
  ca: string;
  token: string;
}

// The devcluster's kubeconfigs are written by clientcmd: one cluster with
// embedded CA data and one user with a static bearer token.
function readKubeconfig(file: string): Cluster {
  const text = fs.readFileSync(file, 'utf8');
  const field = (name: string) => new RegExp(`^\\s*${name}:\\s*["']?([^"'\\s]+)["']?\\s*$`, 'm').exec(text)?.[1];
  const server = field('server');
  const caData = field('certificate-authority-data');
  const token = field('token');
  if (!server || !caData || !token) {
    throw new Error(`${file}: expected server, certificate-authority-data and token (a devcluster kubeconfig)`);
  }
  return { server, ca: Buffer.from(caData, 'base64').toString('utf8'), token };
}

/** The bearer token of a devcluster identity (admin, auditor, approver), from its kubeconfig. */
export function bearerToken(identity: string): string {
  const dir = process.env.DEVCLUSTER_DIR;
  if (!dir) throw new Error('DEVCLUSTER_DIR is not set');
  return readKubeconfig(path.resolve(dir, 'kubeconfigs', `${identity}.kubeconfig`)).token;
}

/** Who a call is made as: the admin impersonating a user and groups. */
export interface ActAs {
  user: string;
  groups: string[];
}

/** Calls the devcluster API server as admin (or as whom the admin impersonates). */
export async function call(method: string, apiPath: string, body?: unknown, as?: ActAs): Promise<{ status: number; json: any }> {
  const c = readKubeconfig(adminKubeconfig());
  const url = new URL(apiPath, c.server);
  const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  return new Promise((resolve, reject) => {
    const req = https.request(url, {
      method,
      ca: c.ca,
      headers: {
        Authorization: `Bearer ${c.token}`,
        Accept: 'application/json',
        ...(as ? { 'Impersonate-User': as.user, 'Impersonate-Group': as.groups } : {}),
        ...(payload ? { 'Content-Type': 'application/json', 'Content-Length': payload.length } : {}),
      },
      timeout: 10_000,
    }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (d) => chunks.push(d));
      res.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        let json: any = raw;
        try { json = JSON.parse(raw); } catch { /* not JSON */ }
        resolve({ status: res.statusCode || 0, json });
      });
    });
    req.on('timeout', () => req.destroy(new Error(`${method} ${url} timed out`)));
    req.on('error', reject);
    if (payload) req.write(payload);
    req.end();
  });
}

// --- a PKCS#10 request in DER, built by hand (Node has no CSR API) ---------

function der(tag: number, content: Buffer): Buffer {
  const n = content.length;
  let len: Buffer;
  if (n < 0x80) len = Buffer.from([n]);
  else {
    const bytes: number[] = [];
    for (let v = n; v > 0; v >>= 8) bytes.unshift(v & 0xff);
    len = Buffer.from([0x80 | bytes.length, ...bytes]);
  }
  return Buffer.concat([Buffer.from([tag]), len, content]);
}
const seq = (...parts: Buffer[]) => der(0x30, Buffer.concat(parts));
const set = (...parts: Buffer[]) => der(0x31, Buffer.concat(parts));
const utf8 = (s: string) => der(0x0c, Buffer.from(s, 'utf8'));
function oid(dotted: string): Buffer {
  const arcs = dotted.split('.').map(Number);
  const out = [40 * arcs[0] + arcs[1]];
  for (const arc of arcs.slice(2)) {
    const b: number[] = [arc & 0x7f];
    for (let v = arc >> 7; v > 0; v >>= 7) b.unshift(0x80 | (v & 0x7f));
    out.push(...b);
  }
  return der(0x06, Buffer.from(out));
}

/**
 * A PEM certificate request for CN=commonName, O=organization with a new
 * P-256 key, asking for dnsNames as subjectAltNames (an extensionRequest).
 */
export function certificateRequest(commonName: string, organization: string, dnsNames: string[] = []): string {
  const { publicKey, privateKey } = crypto.generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const spki = publicKey.export({ type: 'spki', format: 'der' });
  const subject = seq(
    set(seq(oid('2.5.4.10'), utf8(organization))),
    set(seq(oid('2.5.4.3'), utf8(commonName))),
  );
  let attributes = Buffer.from([0xa0, 0x00]);
  if (dnsNames.length > 0) {
    // GeneralNames of dNSName ([2] IA5String) in a subjectAltName extension.
    const sans = seq(...dnsNames.map((n) => der(0x82, Buffer.from(n, 'ascii'))));
    const extensions = seq(seq(oid('2.5.29.17'), der(0x04, sans)));
    attributes = der(0xa0, seq(oid('1.2.840.113549.1.9.14'), set(extensions)));
  }
  const info = seq(Buffer.from([0x02, 0x01, 0x00]), subject, spki, attributes);
  const signature = crypto.sign('sha256', info, privateKey); // DER ECDSA-Sig-Value
  const request = seq(info, seq(oid('1.2.840.10045.4.3.2')), der(0x03, Buffer.concat([Buffer.from([0]), signature])));
  const b64 = request.toString('base64').replace(/.{64}/g, '$&\n');
  return `-----BEGIN CERTIFICATE REQUEST-----\n${b64}\n-----END CERTIFICATE REQUEST-----\n`;
}

const CSR_API = '/apis/certificates.k8s.io/v1/certificatesigningrequests';

/**
 * Creates a pending CSR for signerName as the devcluster admin, for CN
 * commonName (default: the name; several with one CN are a storm).
 */
export async function createCSR(name: string, signerName: string, commonName = name, dnsNames: string[] = [], as?: ActAs): Promise<void> {
  const request = certificateRequest(commonName, 'clusterdesk-e2e', dnsNames);
  const res = await call('POST', CSR_API, {
    apiVersion: 'certificates.k8s.io/v1',
    kind: 'CertificateSigningRequest',
    metadata: { name, labels: { 'app.kubernetes.io/created-by': 'clusterdesk-e2e' } },
    spec: {
      request: Buffer.from(request).toString('base64'),
      signerName,
      usages: ['digital signature', 'client auth'],
      expirationSeconds: 3600,
    },
  }, as);
  if (res.status !== 201) throw new Error(`creating CSR ${name}: HTTP ${res.status}: ${JSON.stringify(res.json).slice(0, 500)}`);
}

export async function deleteCSR(name: string): Promise<void> {
  const res = await call('DELETE', `${CSR_API}/${encodeURIComponent(name)}`);
  if (res.status !== 200 && res.status !== 404) throw new Error(`deleting CSR ${name}: HTTP ${res.status}`);
}
