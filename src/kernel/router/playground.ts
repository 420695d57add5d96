/**
 * The GraphiQL playground page. Its assets come bundled in
 * @graphql-yoga/render-graphiql (loaded only when the page is first asked
 * for), so the page needs no outside host.
 */
export async function renderPlayground(endpoint: string): Promise<string> {
  const { renderGraphiQL } = await import('@graphql-yoga/render-graphiql');
  return renderGraphiQL({ endpoint, title: 'Switchyard playground' });
}
