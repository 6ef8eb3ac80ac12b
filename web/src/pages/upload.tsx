export function UploadPage({ id }: { id: number }) {
  return <section><h1>Upload to inspection {id}</h1><p>Not built yet.</p></section>;
}
