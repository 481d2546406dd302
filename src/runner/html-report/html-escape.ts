// Escaping for the HTML report: everything that comes from a summary (scenario names, endpoint keys,
// finding details, timeline labels) is data, and a summary may come from anywhere (`evesim report
// FILE`), so no string of it may end an element, open a tag or leave a <script> block.

/** Text for an element's content or a quoted attribute value. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => HTML_ENTITIES[c]!);
}

const HTML_ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/**
 * JSON for a <script type="application/json"> block: `<`, `>` and `&` as \u escapes so that neither
 * `</script>` nor `<!--` can occur in it, and U+2028/U+2029 escaped as well. JSON.parse of the
 * block's text gives the value back unchanged.
 */
export function jsonForScriptTag(value: unknown): string {
  return JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** A library's source put inline as a <script> or <style> body: refused if it could end the element early. */
export function inlineAsset(name: string, text: string, element: 'script' | 'style'): string {
  if (new RegExp(`</${element}`, 'i').test(text) || (element === 'script' && text.includes('<!--'))) {
    throw new Error(`${name} contains "</${element}" or "<!--" and cannot be inlined as is`);
  }
  return text;
}
