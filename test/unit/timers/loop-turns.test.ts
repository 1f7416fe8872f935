import { createLoopTurns, TURN_MS } from '../../../src/loop-turns';

describe('the event loop\'s turns', () => {
  it('is due once the loop has not turned for more than TURN_MS since the first question, and not after it turned', async () => {
    let now = 0;
    const turns = createLoopTurns(() => now);
    expect(turns.due()).toBe(false); // the first question: counted from here
    now += TURN_MS;
    expect(turns.due()).toBe(false);
    now += 1;
    expect(turns.due()).toBe(true);
    await turns.turn();
    expect(turns.due()).toBe(false); // the loop turned: counted again from this question
    now += TURN_MS + 1;
    expect(turns.due()).toBe(true);
  });

  it('counts from the first question after a turn, not from long before it', async () => {
    let now = 0;
    const turns = createLoopTurns(() => now);
    turns.due();
    await turns.turn();
    now += 10 * TURN_MS; // the loop idled meanwhile
    expect(turns.due()).toBe(false);
  });
});
