// User content (names of assets, inspections, photos, annotations, measurements) is text, never
// markup. React renders strings as text; the libraries that take an HTML string instead (Leaflet's
// bindTooltip/bindPopup/setContent and divIcon's `html`, anything that sets innerHTML) get an
// element made here, whose content is set with textContent: a name such as `Tower<style>…</style>`
// shows as written and adds nothing to the page. eslint.config.js refuses the HTML sinks in web/.

/** A `<span>` holding `text` as text. */
export function textElement(text: string, className?: string): HTMLSpanElement {
  const element = document.createElement('span');
  element.textContent = text;
  if (className) element.className = className;
  return element;
}
