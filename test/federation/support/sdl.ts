/** The `@link` line a Federation v2 subgraph starts with, importing the given directives (without `@`). */
export function linkFederation(...directives: string[]): string {
  return `extend schema @link(url: "https://specs.apollo.dev/federation/v2.6", import: [${directives.map((d) => `"@${d}"`).join(', ')}])`;
}
