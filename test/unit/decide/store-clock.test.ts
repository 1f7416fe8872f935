import { manualClock } from '../../../src/clock';
import { createStoreClock, WINDOW_MS } from '../../../src/decide/store-clock';

describe('the store clock', () => {
  it('takes the store\'s offset from replies, and a reply read late (a busy event loop) never moves it back', () => {
    const local = manualClock(1_000_000);
    const clock = createStoreClock(local);
    clock.observe(1_010_000); // store 10 s ahead, reply read at once
    expect(clock.offset()).toBe(10_000);
    local.advance(100);
    clock.observe(1_009_800); // TIME taken 300 ms before the reply was read
    expect(clock.offset()).toBe(10_000);
    expect(clock.now()).toBe(1_010_100);
  });

  it('follows a pod clock that was stepped once the old samples are older than WINDOW_MS', () => {
    const local = manualClock(0);
    const clock = createStoreClock(local);
    clock.observe(5000);
    expect(clock.offset()).toBe(5000);
    local.advance(WINDOW_MS / 2);
    clock.observe(local.now() + 2000);
    expect(clock.offset()).toBe(5000); // the earlier, larger sample still counts
    local.advance(WINDOW_MS / 2);
    clock.observe(local.now() + 2000);
    local.advance(WINDOW_MS / 2);
    clock.observe(local.now() + 2000);
    expect(clock.offset()).toBe(2000);
  });
});
