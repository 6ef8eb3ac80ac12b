export function AllowancePage() {
  return <section><h1>Allowance</h1><p>Not built yet.</p></section>;
}
