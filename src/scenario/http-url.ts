// Whether a text is an http(s) URL, with the one-line reason when it is not: shared by the
// scenario check (target.url) and the CLI flags (--controller, --controller-admin).

/** Why `text` is not an http:// or https:// URL, or undefined when it is. `example` is shown in the reason. */
export function httpUrlProblem(text: string, example: string): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return `"${text}" is not a URL; expected e.g. ${example}`;
  }
  // The WHATWG parser refuses an http(s) URL without a host, so the scheme is all that is left to check.
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return `must be an http:// or https:// URL (got "${text}")`;
  return undefined;
}
