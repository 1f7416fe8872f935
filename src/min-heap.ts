/** A binary min-heap ordered by (at, seq): earliest release first, ties in insertion order. */
export interface HeapEntry {
  at: number;
  seq: number;
}

export class MinHeap<T extends HeapEntry> {
  private readonly items: T[] = [];

  get size(): number {
    return this.items.length;
  }

  peek(): T | undefined {
    return this.items[0];
  }

  push(item: T): void {
    const a = this.items;
    a.push(item);
    let i = a.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!less(a[i], a[parent])) break;
      [a[i], a[parent]] = [a[parent], a[i]];
      i = parent;
    }
  }

  pop(): T | undefined {
    const a = this.items;
    if (a.length === 0) return undefined;
    const top = a[0];
    const last = a.pop() as T;
    if (a.length > 0) {
      a[0] = last;
      this.sinkFrom(0);
    }
    return top;
  }

  /** Every entry, in heap order (read only). */
  values(): readonly T[] {
    return this.items;
  }

  /** Removes and returns every entry (in heap order, not sorted). */
  drain(): T[] {
    return this.items.splice(0, this.items.length);
  }

  private sinkFrom(start: number): void {
    const a = this.items;
    let i = start;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < a.length && less(a[l], a[m])) m = l;
      if (r < a.length && less(a[r], a[m])) m = r;
      if (m === i) return;
      [a[i], a[m]] = [a[m], a[i]];
      i = m;
    }
  }
}

const less = (x: HeapEntry, y: HeapEntry): boolean => x.at < y.at || (x.at === y.at && x.seq < y.seq);
