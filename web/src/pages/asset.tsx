export function AssetPage({ id }: { id: number }) {
  return <section><h1>Asset {id}</h1><p>Not built yet.</p></section>;
}
