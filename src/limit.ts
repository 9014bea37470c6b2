/**
 * A small queue in front of work whose results are large (directory listings, big file views):
 * at most `max` run at once, the rest wait in arrival order holding nothing but their arguments.
 * So a thousand outstanding views of a large directory hold at most `max` results in memory, and
 * the JS thread formats at most `max` of them in one turn of the event loop.
 */
export class Limit {
  readonly #max: number;
  #running = 0;
  readonly #waiting: Array<() => void> = [];

  constructor(max: number) {
    this.#max = max;
  }

  async run<T>(job: () => Promise<T>): Promise<T> {
    if (this.#running < this.#max) this.#running++;
    else await new Promise<void>((resolve) => this.#waiting.push(resolve));
    try {
      return await job();
    } finally {
      // Hand the slot straight to the next in line, so none can overtake it.
      const next = this.#waiting.shift();
      if (next) next();
      else this.#running--;
    }
  }
}
