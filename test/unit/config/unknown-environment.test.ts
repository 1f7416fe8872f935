import { unknownEnvironment } from '../../../src/config/unknown-environment';

describe('unknownEnvironment', () => {
  describe('when a SLUICE_ variable is not a setting', () => {
    it('names it, and ignores the known ones and other variables', () => {
      const env = { SLUICE_INGRES_TOPIC: 'x', SLUICE_INGRESS_TOPIC: 'y', SLUICE_CONFIG: 'f', PATH: '/bin', SLUICE_DEMO: '1' };
      expect(unknownEnvironment(env)).toEqual(['SLUICE_DEMO', 'SLUICE_INGRES_TOPIC']);
      expect(unknownEnvironment(env, ['SLUICE_DEMO'])).toEqual(['SLUICE_INGRES_TOPIC']);
    });
  });
});
