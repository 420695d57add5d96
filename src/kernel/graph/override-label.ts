/**
 * Progressive `@override(label:)` (`@join__field(overrideLabel:)`). A label is
 * either `percent(x)`, active for x% of requests, or a custom name that only
 * something outside the supergraph can turn on. Switchyard plans with every
 * label either always on or always off: `percent(100)` is on, `percent(0)` and
 * custom labels are off (nothing in Switchyard enables a custom label). Labels
 * between 0 and 100 are refused when the supergraph loads (unsupported-features.ts).
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

/** Whether the override under this label is in force: only for `percent(100)`. */
export function isOverrideLabelActive(label: string): boolean {
  const parsed = parseOverrideLabel(label);
  return parsed.kind === 'percent' && parsed.percent === 100;
}
