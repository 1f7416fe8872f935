import { benchSluiceEnv } from '../../../bench/pipeline/side-env';

describe('BENCH_SLUICE_ENV', () => {
  it('gives each SLUICE_NAME=value, a value keeping its own = signs', () => {
    expect(benchSluiceEnv(' SLUICE_HOLD_MAX_MESSAGES=8000  SLUICE_REDIS_URL=redis://h:1/?a=b ')).toEqual({
      SLUICE_HOLD_MAX_MESSAGES: '8000',
      SLUICE_REDIS_URL: 'redis://h:1/?a=b',
    });
    expect(benchSluiceEnv(undefined)).toEqual({});
  });

  it('refuses what is not a sluice setting, naming it', () => {
    expect(() => benchSluiceEnv('HOME=/tmp')).toThrow('BENCH_SLUICE_ENV: "HOME=/tmp" is not SLUICE_NAME=value');
    expect(() => benchSluiceEnv('SLUICE_LOG_LEVEL')).toThrow(/"SLUICE_LOG_LEVEL" is not/);
    expect(() => benchSluiceEnv('=x')).toThrow(/"=x" is not/);
    expect(() => benchSluiceEnv('HOME=/tmp', 'BENCH_SLUICE_ONLY_ENV')).toThrow('BENCH_SLUICE_ONLY_ENV: "HOME=/tmp" is not SLUICE_NAME=value');
  });
});
