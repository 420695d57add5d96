import type { ProfileData } from './profile-builder.js';

/**
 * The `debug=1` form of a profile, close to Go's legacy text format: a
 * header with the total, then one block per stack (largest first): the
 * values, `@`, the labels, and one `#` line per frame, leaf first.
 */
export function renderProfileText(profile: ProfileData, title: string, footer: readonly string[] = []): string {
  const text = (index: number | bigint): string => profile.stringTable.strings[Number(index)] ?? '';
  const functions = new Map(profile.function.map((fn) => [Number(fn.id), fn]));
  const locations = new Map(profile.location.map((location) => [Number(location.id), location]));
  const types = profile.sampleType.map((type) => `${text(type.type)}/${text(type.unit)}`);
  const samples = [...profile.sample].sort((a, b) => Number(b.value[0] ?? 0) - Number(a.value[0] ?? 0));
  const total = samples.reduce((sum, sample) => sum + Number(sample.value[0] ?? 0), 0);
  const lines = [`${title}: total ${total}`, `# values: ${types.join(' ')}`, ''];
  for (const sample of samples) {
    const labels = sample.label.map((label) => `${text(label.key)}=${Number(label.str) !== 0 ? text(label.str) : Number(label.num)}`);
    lines.push(`${sample.value.map(Number).join(' ')} @${labels.length > 0 ? ` ${labels.join(' ')}` : ''}`);
    for (const id of sample.locationId) {
      for (const line of locations.get(Number(id))?.line ?? []) {
        const fn = functions.get(Number(line.functionId));
        const file = fn ? text(fn.filename) : '';
        const where = file === '' ? '' : `\t${file}${Number(line.line) > 0 ? `:${Number(line.line)}` : ''}`;
        lines.push(`#\t${fn ? text(fn.name) : '?'}${where}`);
      }
    }
    lines.push('');
  }
  return [...lines, ...footer, ''].join('\n');
}
