/**
 * Typed per-request slots shared between plugins. The plugin that owns a
 * slot exports its key; others import the key, never a free-form bag.
 */
export class StateKey<T> {
  /** Shown in debug output. */
  readonly name: string;
  /** Only for typing; never set. */
  declare readonly __type?: T;

  constructor(name: string) {
    this.name = name;
  }
}

/** The slots of one request. Created lazily: a request nobody writes to allocates no map. */
export class RequestState {
  private slots: Map<StateKey<unknown>, unknown> | undefined;

  get<T>(key: StateKey<T>): T | undefined {
    return this.slots?.get(key as StateKey<unknown>) as T | undefined;
  }

  set<T>(key: StateKey<T>, value: T): void {
    (this.slots ??= new Map()).set(key as StateKey<unknown>, value);
  }

  has(key: StateKey<unknown>): boolean {
    return this.slots?.has(key) ?? false;
  }

  delete(key: StateKey<unknown>): void {
    this.slots?.delete(key);
  }

  /** A new state holding what this one holds now (each event of a subscription runs on its own fork). */
  fork(): RequestState {
    const copy = new RequestState();
    if (this.slots) copy.slots = new Map(this.slots);
    return copy;
  }
}
