import { createStatusProvider, DrainerView, StatusDeps } from '../../../src/app/status';

const provider = ({ ingressCrashed = false, drainer }: { ingressCrashed?: boolean; drainer?: DrainerView }) =>
  createStatusProvider({
    ingress: { crashed: () => ingressCrashed, joined: () => true },
    drainer: () => drainer,
  } as unknown as StatusDeps);

const drainer = (crashed: boolean): DrainerView => ({ joined: () => true, crashed: () => crashed, held: () => ({ messages: 0, bytes: 0 }) });

describe('liveness (/healthz)', () => {
  it('is alive while neither consumer has crashed for good', () => {
    expect(provider({ drainer: drainer(false) }).alive()).toBe(true);
  });

  it('is not alive once the ingress consumer crashed for good', () => {
    expect(provider({ ingressCrashed: true, drainer: drainer(false) }).alive()).toBe(false);
  });

  it('is not alive once the drainer of the retry tiers crashed for good', () => {
    expect(provider({ drainer: drainer(true) }).alive()).toBe(false);
  });

  it('is alive before the drainer has started', () => {
    expect(provider({}).alive()).toBe(true);
  });
});
