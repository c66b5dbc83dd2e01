/** What a redacted credential reads as. */
export const REDACTED = '***';

/**
 * Query parameters whose values are credentials (`?password=`, `?access_token=`, `?api_key=`, AWS's `X-Amz-Signature`
 * and `X-Amz-Credential`, `?sig=`, `?auth=`): any name containing one of these words.
 */
const CREDENTIAL_PARAM = /pass|pwd|token|secret|key|sig|auth|cred|session/i;

/** The scheme's `//`, the user info and the host of a URL-like text, and where its query starts. */
interface UrlParts {
  /** Index where the user info starts (after `scheme://`, or 0 for a text without a scheme). */
  userStart: number;
  /** Index of the `@` that ends the user info; -1 when there is none. */
  at: number;
  /** Index of the `?` that starts the query, or -1. */
  query: number;
  /** Index of the `#` that starts the fragment, or the text's length. */
  end: number;
}

/**
 * The parts of `text` as a URL. In a valid URL the user info ends at the last `@` of the authority (before the path);
 * a value that is not one is read leniently, since a value refused by validation is quoted too: its user info is
 * everything up to the last `@` before the query or fragment (so `redis//:pw@host`, a typo, still hides `pw`).
 */
function urlParts(text: string): UrlParts {
  const hash = text.indexOf('#');
  const end = hash === -1 ? text.length : hash;
  const queryAt = text.indexOf('?');
  const query = queryAt !== -1 && queryAt < end ? queryAt : -1;
  const scheme = /^[A-Za-z][\w+.-]*:\/\//.exec(text);
  const userStart = scheme ? scheme[0].length : 0;
  let authorityEnd = query === -1 ? end : query;
  if (scheme && URL.canParse(text)) {
    const path = text.slice(userStart, authorityEnd).search(/[/\\]/);
    if (path !== -1) authorityEnd = userStart + path;
  }
  return { userStart, at: text.lastIndexOf('@', authorityEnd - 1), query, end };
}

/** The `name=value` pairs of a query text (without the `?`), each with its value's place in the text. */
function queryPairs(query: string): Array<{ name: string; start: number; value: string }> {
  const pairs: Array<{ name: string; start: number; value: string }> = [];
  let offset = 0;
  for (const pair of query.split('&')) {
    const eq = pair.indexOf('=');
    if (eq !== -1) pairs.push({ name: pair.slice(0, eq), start: offset + eq + 1, value: pair.slice(eq + 1) });
    offset += pair.length + 1;
  }
  return pairs;
}

/**
 * A URL as it may be shown or stored: its user info (`user:password@`) and the values of credential query parameters
 * replaced by `***`, the scheme, host, port and path kept (`redis://***@cache:6379/0`). A text with neither comes back
 * unchanged.
 */
export function redactUrl(text: string): string {
  const { userStart, at, query, end } = urlParts(text);
  let out =
    at >= userStart
      ? `${text.slice(0, userStart)}${REDACTED}${text.slice(at, query === -1 ? end : query)}`
      : text.slice(0, query === -1 ? end : query);
  if (query !== -1) {
    const queryText = text.slice(query + 1, end);
    let kept = 0;
    let redacted = '';
    for (const { name, start, value } of queryPairs(queryText)) {
      if (!value || !CREDENTIAL_PARAM.test(safeDecode(name))) continue;
      redacted += `${queryText.slice(kept, start)}${REDACTED}`;
      kept = start + value.length;
    }
    out += `?${redacted}${queryText.slice(kept)}`;
  }
  return out + text.slice(end);
}

/**
 * The parts of a URL that are credentials, as they may appear in a message: the password (or a user name given
 * alone, as tokens are: `https://TOKEN@host`), the whole user info, and the values of credential query parameters,
 * each also percent-decoded.
 */
export function urlCredentials(text: string): string[] {
  const { userStart, at, query, end } = urlParts(text);
  const found: string[] = [];
  if (at >= userStart) {
    const userInfo = text.slice(userStart, at);
    const colon = userInfo.indexOf(':');
    found.push(userInfo, colon === -1 ? userInfo : userInfo.slice(colon + 1));
  }
  if (query !== -1) {
    for (const { name, value } of queryPairs(text.slice(query + 1, end))) {
      if (value && CREDENTIAL_PARAM.test(safeDecode(name))) found.push(value);
    }
  }
  return [...new Set(found.flatMap((part) => [part, safeDecode(part)]).filter(Boolean))];
}

/**
 * User info of URLs inside a text (`... at redis://user:pw@host ...`): `scheme://`, then no space, `/` or `@` up to an
 * `@`. The scheme is at most 64 characters: unbounded, each start in a long run of word characters and dots scanned
 * the rest of the run for a `://` (quadratic: 2 s of CPU for a 110 KB `--set` argument).
 */
const URL_USER_INFO = /\b([A-Za-z][\w+.-]{0,63}:\/\/)[^\s/?#@"'<>]+@/g;
/**
 * A credential query parameter inside a text: `?token=...` or `&api_key=...`, up to the next `&`, `#`, quote or space.
 * A name stops at the next `?` too, so no start scans past the next one (linear on `?a?a?a...`).
 */
const URL_CREDENTIAL_PARAM = /([?&][^\s=&#?"'<>]+=)([^\s&#"'<>]+)/g;

/**
 * `text` with the user info and credential query parameters of every URL in it replaced by `***`: the net under
 * messages that quote a URL no config key names (a library's error, a path given on the command line).
 */
export function redactUrlsInText(text: string): string {
  if (!text.includes('://') && !text.includes('=')) return text;
  return text
    .replace(URL_USER_INFO, `$1${REDACTED}@`)
    .replace(URL_CREDENTIAL_PARAM, (whole, name: string, value: string) =>
      CREDENTIAL_PARAM.test(safeDecode(name.slice(1, -1))) && value !== REDACTED ? `${name}${REDACTED}` : whole,
    );
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
