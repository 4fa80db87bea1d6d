// A ValidatingAdmissionPolicy deployed for one spec: it matches only the
// CSIDriver of the spec's name, is bound with Deny, and that driver is
// created through it, so the API server reports one admitted write for the
// replay specs (replay.spec.ts, editor-replay.spec.ts) to replay a draft on.
import { expect } from '@playwright/test';
import { call } from './kube';

const API = '/apis/admissionregistration.k8s.io/v1';

/** Deploys the policy with validation `expression`, its binding and the driver, all named `name`. */
export async function deployCSIDriverPolicy(name: string, expression: string): Promise<void> {
  const created = [
    await call('POST', `${API}/validatingadmissionpolicies`, {
      apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingAdmissionPolicy', metadata: { name },
      spec: {
        failurePolicy: 'Fail',
        matchConstraints: { resourceRules: [{ apiGroups: ['storage.k8s.io'], apiVersions: ['v1'], operations: ['CREATE'], resources: ['csidrivers'] }] },
        matchConditions: [{ name: 'this-spec', expression: `object.metadata.name == '${name}'` }],
        validations: [{ expression, message: 'a team label is required' }],
      },
    }),
    await call('POST', `${API}/validatingadmissionpolicybindings`, {
      apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingAdmissionPolicyBinding', metadata: { name },
      spec: { policyName: name, validationActions: ['Deny'] },
    }),
    await call('POST', '/apis/storage.k8s.io/v1/csidrivers', {
      apiVersion: 'storage.k8s.io/v1', kind: 'CSIDriver', metadata: { name }, spec: {},
    }),
  ];
  for (const r of created) expect(r.status, JSON.stringify(r.json).slice(0, 300)).toBe(201);
}

/** Deletes what deployCSIDriverPolicy made. */
export async function removeCSIDriverPolicy(name: string): Promise<void> {
  await call('DELETE', `/apis/storage.k8s.io/v1/csidrivers/${name}`);
  await call('DELETE', `${API}/validatingadmissionpolicybindings/${name}`);
  await call('DELETE', `${API}/validatingadmissionpolicies/${name}`);
}
