export function ProcessingPage({ id }: { id: number }) {
  return <section><h1>Processing of inspection {id}</h1><p>Not built yet.</p></section>;
}
