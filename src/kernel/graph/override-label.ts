/**
 * Progressive `@override(label:)` (`@join__field(overrideLabel:)`). A label is
 * either `percent(x)`, active for x% of operations, or a custom name that
 * something outside the supergraph turns on: a plan hook, through the plan
 * input's `overrideLabels`. `percent(100)` is always on and `percent(0)`
 * always off; each `percent(x)` between is drawn for each operation
 * (OverrideLabels.draw), and the operation is planned, and its plan cached,
 * with the labels on for it.
 */

/** What a label says. */
export type OverrideLabel = { readonly kind: 'percent'; readonly percent: number } | { readonly kind: 'custom' } | { readonly kind: 'malformed' };

const PERCENT = /^percent\((\d+(?:\.\d+)?)\)$/;

export function parseOverrideLabel(label: string): OverrideLabel {
  if (!label.startsWith('percent(')) return { kind: 'custom' };
  const match = PERCENT.exec(label);
  const percent = match ? Number(match[1]) : Number.NaN;
  return percent >= 0 && percent <= 100 ? { kind: 'percent', percent } : { kind: 'malformed' };
}

/** Whether the override under this label is in force: always for `percent(100)`, never for `percent(0)`, else when it is on. */
export function isOverrideLabelActive(label: string, on: ReadonlySet<string>): boolean {
  const parsed = parseOverrideLabel(label);
  if (parsed.kind === 'malformed' || (parsed.kind === 'percent' && parsed.percent === 0)) return false;
  return (parsed.kind === 'percent' && parsed.percent === 100) || on.has(label);
}

/** The labels one operation is planned with: those of the graph that can be on or off, and are on. */
export interface LabelsOn {
  readonly on: ReadonlySet<string>;
  /** The labels on, sorted, one per line ('' for none): part of the plan cache key. */
  readonly key: string;
}

export const NO_LABELS: LabelsOn = { on: new Set(), key: '' };

/** A graph's override labels that are not fixed: `percent(x)` with 0 < x < 100, and custom labels. */
export class OverrideLabels {
  /** The `percent(x)` labels, drawn for each operation, sorted. */
  private readonly percents: ReadonlyArray<{ readonly label: string; readonly percent: number }>;
  private readonly switchable = new Set<string>();

  /** `labels`: every override label of the graph. */
  constructor(labels: Iterable<string>) {
    const percents = new Map<string, number>();
    for (const label of labels) {
      const parsed = parseOverrideLabel(label);
      if (parsed.kind === 'custom') this.switchable.add(label);
      else if (parsed.kind === 'percent' && parsed.percent > 0 && parsed.percent < 100) {
        percents.set(label, parsed.percent);
        this.switchable.add(label);
      }
    }
    this.percents = [...percents].sort(([a], [b]) => compare(a, b)).map(([label, percent]) => ({ label, percent }));
  }

  /** The `percent(x)` labels on for one operation: each with its probability, on its own (`random` in [0, 1), as Math.random). */
  draw(random: () => number = Math.random): readonly string[] {
    if (this.percents.length === 0) return NO_DRAW;
    const on: string[] = [];
    for (const { label, percent } of this.percents) if (random() * 100 < percent) on.push(label);
    return on.length === 0 ? NO_DRAW : on;
  }

  /** `labels` (a draw, or what a plan hook made of it) as the planner takes them: the graph's switchable labels among them, once each. */
  labelsOn(labels: readonly string[]): LabelsOn {
    if (labels.length === 0) return NO_LABELS;
    const on = [...new Set(labels.filter((label) => this.switchable.has(label)))].sort(compare);
    return on.length === 0 ? NO_LABELS : { on: new Set(on), key: on.join('\n') };
  }
}

const NO_DRAW: readonly string[] = Object.freeze([]);

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
